export { IcebergError, isIcebergError, type IcebergErrorKind, type IcebergErrorOptions } from './errors.ts';
export { parseJson, stringifyJson } from './spec/json.ts';
export * from './spec/metadata.ts';
export * from './catalog/rest/index.ts';
export * from './io/index.ts';
export * from './spec/index.ts';
export { commitSchemaChange, type NewColumn, type SchemaChange } from './transaction/schema-change.ts';
