import { RestCatalog } from '@tablemere/iceberg';
import type { WarehouseAccess } from './warehouses.ts';

/** Catalog calls made while serving a request give up after this long. */
export const CATALOG_TIMEOUT_MS = 10_000;

export function connectCatalog(warehouse: WarehouseAccess, timeoutMs: number): Promise<RestCatalog> {
  return RestCatalog.connect({ uri: warehouse.restUri, warehouse: warehouse.warehouse, auth: warehouse.auth, timeoutMs });
}

/**
 * One catalog client per warehouse, kept between requests so the `/v1/config` read and the
 * OAuth2 token are reused. Warehouses never change after registration, so the id is a
 * sufficient key; a failed connect is forgotten and tried again next time.
 */
export class CatalogConnections {
  private readonly clients = new Map<string, Promise<RestCatalog>>();

  constructor(private readonly timeoutMs: number = CATALOG_TIMEOUT_MS) {}

  get(warehouse: WarehouseAccess): Promise<RestCatalog> {
    let client = this.clients.get(warehouse.id);
    if (!client) {
      client = connectCatalog(warehouse, this.timeoutMs);
      this.clients.set(warehouse.id, client);
      client.catch(() => this.clients.delete(warehouse.id));
    }
    return client;
  }
}
