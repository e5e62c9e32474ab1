import {
  type CreatedSink,
  type CreateSinkRequest,
  type FieldRefusal,
  inferredFieldsJson,
  inferSchema,
  INGEST_TS_COLUMN,
  MAX_TABLE_COLUMNS,
  type NewFieldJson,
  type SinkTableRequest,
} from '@tablemere/contracts';
import { isIcebergError, type RestCatalog } from '@tablemere/iceberg';
import { apiError, ApiError, toApiError } from '../../errors.ts';
import { recordAudit } from '../audit.ts';
import type { Principal } from '../principal.ts';
import { columnFields, createCatalogTable, describeTable } from '../tables.ts';
import { openWarehouse } from '../warehouses.ts';
import { createSink, type CreateSinkDeps } from './create.ts';

/**
 * POST /v1/sinks with `create_table`: the table, then the sink, in one request. The table is
 * created first (the sink needs its uuid); when the sink then fails (a sink of that name
 * exists, the database is down), the table is dropped again if it is still the one created
 * and still empty, and the error says what became of it. Both audit events carry the
 * request id.
 */
export async function createSinkWithTable(
  deps: CreateSinkDeps,
  principal: Principal,
  request: CreateSinkRequest & { create_table: SinkTableRequest },
  requestId: string,
): Promise<CreatedSink> {
  const spec = request.create_table;
  const fields = spec.columns === undefined ? inferredColumns(spec.infer_from ?? []) : columnFields(spec.columns);
  const inferred = spec.columns === undefined;
  const warehouse = await openWarehouse(deps.pool, deps.secrets, principal.projectId, request.warehouse);
  const catalog = await deps.catalogs.get(warehouse);
  const { namespace, name } = request.table;
  const made = await createCatalogTable(catalog, namespace, name, fields);
  const tableUuid = made.metadata['table-uuid'];
  const audit = (event: string, details: Record<string, unknown>) =>
    recordAudit(deps.pool, {
      projectId: principal.projectId,
      actorKeyId: principal.keyId,
      event,
      subject: `${warehouse.name}/${namespace}.${name}`,
      details: { table_uuid: tableUuid, request_id: requestId, ...details },
    });
  try {
    await audit('table.create', { columns: fields.length, inferred, for_sink: request.name });
    const sink = await createSink(deps, principal, request, { warehouse, metadata: made.metadata, auditDetails: { request_id: requestId, table_created: true } });
    return { ...sink, created_table: { ...describeTable(warehouse.name, namespace, name, made.metadata), inferred } };
  } catch (error) {
    const undone = await dropIfUntouched(catalog, namespace, name, tableUuid, made.namespaceCreated);
    if (undone.dropped && !undone.gone) await audit('table.drop', { reason: 'the sink was not created', namespace_dropped: undone.namespaceDropped }).catch(() => undefined);
    throw withTableOutcome(error, `${namespace}.${name}`, tableUuid, undone);
  }
}

/** The sample's schema (every column optional); 400 schema_not_inferred naming every field it cannot type. */
function inferredColumns(rows: readonly unknown[]): NewFieldJson[] {
  const result = inferSchema(rows, { reserved: { [INGEST_TS_COLUMN]: "is filled by the roller with each batch's received time" } });
  if (!result.ok) throw notInferred(result.refusals);
  if (result.fields.length > MAX_TABLE_COLUMNS) {
    throw notInferred([{ path: '', reason: `the rows hold ${result.fields.length} fields; a table takes at most ${MAX_TABLE_COLUMNS} columns` }]);
  }
  return inferredFieldsJson(result.fields, 1).fields;
}

function notInferred(refusals: FieldRefusal[]): ApiError {
  const listed = refusals.map((r) => (r.path === '' ? r.reason : `${r.path} (${r.reason})`)).join('; ');
  return apiError('schema_not_inferred', {
    message: `The sample rows in create_table.infer_from cannot give the table's columns: ${listed}. Fix the sample, or give create_table.columns.`,
    details: { fields: refusals },
  });
}

interface Undone {
  /** The table is no longer there. */
  dropped: boolean;
  /** Someone else had dropped it already (so this request records no drop). */
  gone?: boolean;
  namespaceDropped: boolean;
  /** Why the table was left in place. */
  left?: string;
}

/**
 * Drops the table this request created, when it is still that table (same uuid) and holds no
 * snapshot; then its namespace, when the request created that too and it is empty. Never
 * throws: what could not be undone is said. (A writer committing between the check and the
 * drop cannot be excluded: the REST catalog has no conditional drop.)
 */
async function dropIfUntouched(catalog: RestCatalog, namespace: string, name: string, tableUuid: string, namespaceCreated: boolean): Promise<Undone> {
  try {
    const { metadata } = await catalog.loadTable({ namespace, name });
    if (metadata['table-uuid'] !== tableUuid) return { dropped: false, namespaceDropped: false, left: `the table there now is another one (uuid ${metadata['table-uuid']})` };
    if ((metadata.snapshots ?? []).length > 0) return { dropped: false, namespaceDropped: false, left: 'it holds snapshots now, written by someone else' };
    await catalog.dropTable({ namespace, name }, { purge: true });
  } catch (error) {
    if (isIcebergError(error, 'not_found')) return { dropped: true, gone: true, namespaceDropped: false };
    return { dropped: false, namespaceDropped: false, left: `dropping it failed: ${toApiError(error).message}` };
  }
  if (!namespaceCreated) return { dropped: true, namespaceDropped: false };
  try {
    if ((await catalog.listTables(namespace)).length > 0) return { dropped: true, namespaceDropped: false };
    await catalog.dropNamespace(namespace);
    return { dropped: true, namespaceDropped: true };
  } catch {
    // An empty namespace left behind holds nothing; the table is what mattered.
    return { dropped: true, namespaceDropped: false };
  }
}

/** The sink's error, saying what became of the table the request created. */
function withTableOutcome(error: unknown, table: string, tableUuid: string, undone: Undone): ApiError {
  const cause = toApiError(error);
  const said = undone.dropped
    ? `Table ${table}, created by this request, was ${undone.gone ? 'dropped by someone else already' : 'dropped again'}${undone.namespaceDropped ? ' (with its namespace, also created by this request)' : ''}.`
    : `Table ${table} (uuid ${tableUuid}), created by this request, is left in the catalog: ${undone.left}. Drop it, or create the sink on it without create_table.`;
  return new ApiError(cause.code, {
    message: `${cause.message} ${said}`,
    details: { ...cause.details, created_table: { table, table_uuid: tableUuid, dropped: undone.dropped, ...(undone.left ? { left: undone.left } : {}) } },
    headers: cause.headers,
    cause: error,
  });
}
