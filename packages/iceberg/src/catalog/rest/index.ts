export { RestCatalog, type RestCatalogOptions } from './client.ts';
export type { CatalogAuth } from './auth.ts';
export { kindForStatus } from './status.ts';
export type * from './types.ts';
