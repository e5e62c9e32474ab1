import { createHash } from 'node:crypto';
import { catalogAuthFromWire, type InternalWarehouse } from '@tablemere/contracts';
import {
  type LoadTableResult,
  RestCatalog,
  type S3FileIO,
  s3FileIOForTable,
  type TableIdent,
} from '@tablemere/iceberg';
import { RollError, toRollError } from '../errors.ts';
import { checkpoint, type RollContext } from './context.ts';

/** The sink's table as the tenant sees it: the warehouse's catalog auth, its storage access. */
export interface TenantTable {
  catalog: RestCatalog;
  ident: TableIdent;
  loaded: LoadTableResult;
  /** Vended credentials when the catalog hands them out, else the warehouse's own. */
  io: S3FileIO;
}

/**
 * Catalog clients per warehouse, kept across rolls (each connect reads /v1/config and an
 * OAuth2 client caches its token). A warehouse whose settings changed gets a new client.
 * Every catalog request, and every request to the table's storage, is bounded by `timeoutMs`
 * (TABLEMERE_ROLLER_CALL_TIMEOUT_SECONDS): no answer in time is catalog_unavailable.
 */
export class TenantCatalogs {
  private readonly clients = new Map<string, { fingerprint: string; client: Promise<RestCatalog> }>();

  constructor(readonly timeoutMs = 10_000) {}

  catalog(warehouse: InternalWarehouse): Promise<RestCatalog> {
    const fingerprint = createHash('sha256').update(JSON.stringify([warehouse.rest_uri, warehouse.warehouse, warehouse.auth])).digest('hex');
    const cached = this.clients.get(warehouse.id);
    if (cached?.fingerprint === fingerprint) return cached.client;
    const client = RestCatalog.connect({ uri: warehouse.rest_uri, warehouse: warehouse.warehouse, auth: catalogAuthFromWire(warehouse.auth), timeoutMs: this.timeoutMs });
    this.clients.set(warehouse.id, { fingerprint, client });
    // A failed connect is not kept: the next roll tries again.
    client.catch(() => {
      if (this.clients.get(warehouse.id)?.client === client) this.clients.delete(warehouse.id);
    });
    return client;
  }
}

/** The FileIO for the table's files: vended credentials first, the warehouse's S3 settings otherwise. */
export function tableIO(loaded: LoadTableResult, warehouse: InternalWarehouse, timeoutMs?: number): S3FileIO {
  const { s3 } = warehouse;
  return s3FileIOForTable(loaded, {
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    endpoint: s3.endpoint,
    region: s3.region,
    pathStyle: s3.path_style,
    ...(s3.access_key_id && s3.secret_access_key ? { credentials: { accessKeyId: s3.access_key_id, secretAccessKey: s3.secret_access_key } } : {}),
  });
}

/**
 * Step 1, reload: the table loaded fresh as the tenant. A table (or namespace) the catalog
 * does not know is `table_missing`; a table re-created under the sink's name (another uuid)
 * is used as it is now, and said so in the log.
 */
export async function reloadTable(ctx: RollContext): Promise<TenantTable> {
  checkpoint(ctx);
  const { sink } = ctx;
  const ident: TableIdent = { namespace: sink.namespace, name: sink.table };
  let catalog: RestCatalog;
  let loaded: LoadTableResult;
  try {
    catalog = await ctx.deps.catalogs.catalog(sink.warehouse);
    loaded = await catalog.loadTable(ident);
  } catch (error) {
    throw toRollError(error, 'catalog');
  }
  const uuid = loaded.metadata['table-uuid'];
  if (sink.table_uuid !== null && uuid !== sink.table_uuid) {
    ctx.log.warn({ table_uuid: uuid, sink_table_uuid: sink.table_uuid }, 'the table was re-created since the sink was made; appending to the table now under that name');
  }
  const version = loaded.metadata['format-version'];
  if (version !== 2 && version !== 3) {
    throw new RollError('table_unsupported', `table ${sink.namespace}.${sink.table} is format v${version}; sinks append to format v2 and v3 tables`);
  }
  return { catalog, ident, loaded, io: tableIO(loaded, sink.warehouse, ctx.deps.catalogs.timeoutMs) };
}

/** The same table loaded again (after a commit of ours or a lost race). */
export async function refreshTable(table: TenantTable): Promise<TenantTable> {
  try {
    return { ...table, loaded: await table.catalog.loadTable(table.ident) };
  } catch (error) {
    throw toRollError(error, 'catalog');
  }
}
