import { createHash } from 'node:crypto';
import { RestCatalog } from '@tablemere/iceberg';
import type { WarehouseAccess } from './warehouses.ts';

/** Catalog calls made while serving a request give up after this long (TABLEMERE_CATALOG_TIMEOUT_MS). */
export const CATALOG_TIMEOUT_MS = 10_000;

export function connectCatalog(warehouse: WarehouseAccess, timeoutMs: number): Promise<RestCatalog> {
  return RestCatalog.connect({ uri: warehouse.restUri, warehouse: warehouse.warehouse, auth: warehouse.auth, timeoutMs });
}

/** What a catalog client is made from: a PATCH of any of it means a new client. */
function settingsOf(warehouse: WarehouseAccess): string {
  return createHash('sha256').update(JSON.stringify([warehouse.restUri, warehouse.warehouse, warehouse.auth])).digest('base64');
}

/**
 * One catalog client per warehouse, kept between requests so the `/v1/config` read and the
 * OAuth2 token are reused, until the registration changes (PATCH /v1/warehouses: the request
 * reads the registration, so its next catalog call uses the new one); a failed connect is
 * forgotten and tried again next time.
 */
export class CatalogConnections {
  private readonly clients = new Map<string, { settings: string; client: Promise<RestCatalog> }>();

  constructor(private readonly timeoutMs: number = CATALOG_TIMEOUT_MS) {}

  get(warehouse: WarehouseAccess): Promise<RestCatalog> {
    const settings = settingsOf(warehouse);
    const kept = this.clients.get(warehouse.id);
    if (kept?.settings === settings) return kept.client;
    const entry = { settings, client: connectCatalog(warehouse, this.timeoutMs) };
    this.clients.set(warehouse.id, entry);
    entry.client.catch(() => {
      if (this.clients.get(warehouse.id) === entry) this.clients.delete(warehouse.id);
    });
    return entry.client;
  }
}
