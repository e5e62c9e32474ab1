export * from './types.ts';
export * from './schema.ts';
