export * from './errors.ts';
export * from './health.ts';
export * from './iceberg-types.ts';
export * from './keys.ts';
export * from './names.ts';
export * from './tables.ts';
export * from './warehouses.ts';
export * from './connection.ts';
