import { type CreatedSink, type CreateSinkRequest } from '@tablemere/contracts';
import { isPgError, PgErrorCode, query, queryOne, transaction, type Pool, type Queryable } from '@tablemere/db';
import { DATA_FORMAT_VERSIONS, isIcebergError, type RestCatalog, type TableMetadata } from '@tablemere/iceberg';
import { apiError, tableNotFound } from '../../errors.ts';
import { recordAudit } from '../audit.ts';
import type { CatalogConnections } from '../catalogs.ts';
import type { Principal } from '../principal.ts';
import type { SecretBox } from '../secrets.ts';
import { listTables } from '../tables.ts';
import { openWarehouse, type WarehouseAccess } from '../warehouses.ts';
import { sinkPartition } from './partition.ts';
import { generateSinkCredentials, sendKeyDigest } from './send-keys.ts';
import { describeSinks, SINK_COLUMNS, SINK_FROM, type SinkRow, type SinkViewContext } from './view.ts';

export interface CreateSinkDeps extends SinkViewContext {
  pool: Pool;
  secrets: SecretBox;
  catalogs: CatalogConnections;
}

/** The table's metadata, or 404 table_not_found listing the namespace's tables. */
async function loadTargetTable(catalog: RestCatalog, namespace: string, name: string) {
  try {
    return (await catalog.loadTable({ namespace, name })).metadata;
  } catch (error) {
    if (!isIcebergError(error, 'not_found')) throw error;
    const tables = await listTables(catalog, namespace);
    throw tableNotFound(`${namespace}.${name}`, tables.map((t) => t.table));
  }
}

/**
 * A table the same request just created for the sink (see table.ts), in the warehouse it
 * opened for that: both used as they are, and the table named in the audit event.
 */
export interface MadeTable {
  warehouse: WarehouseAccess;
  metadata: TableMetadata;
  auditDetails: Record<string, unknown>;
}

/**
 * Creates a sink for an existing table (partitioned or not; a `partition` is checked on it and
 * applied by the first roll). Reads the table through the warehouse's catalog and commits nothing to it; no identity is created anywhere. The send
 * key is in the answer and nowhere else.
 */
export async function createSink(deps: CreateSinkDeps, principal: Principal, request: CreateSinkRequest, made?: MadeTable): Promise<CreatedSink> {
  const warehouse = made?.warehouse ?? (await openWarehouse(deps.pool, deps.secrets, principal.projectId, request.warehouse));
  const { namespace, name: tableName } = request.table;
  const qualified = `${namespace}.${tableName}`;
  const metadata = made?.metadata ?? (await loadTargetTable(await deps.catalogs.get(warehouse), namespace, tableName));
  const version = metadata['format-version'];
  if (!DATA_FORMAT_VERSIONS.includes(version)) {
    throw apiError('table_format_unsupported', {
      message: `Table ${qualified} is format v${version}; sinks append to format v${DATA_FORMAT_VERSIONS.join(' and v')} tables.`,
      details: { table: qualified, format_version: version },
    });
  }
  const partition = sinkPartition(metadata, request.partition, qualified);

  const { sinkId, sendKey } = generateSinkCredentials();
  const row = await transaction(deps.pool, async (client) => {
    try {
      await query(
        client,
        `INSERT INTO sinks (id, project_id, warehouse_id, name, namespace, table_name, table_uuid, roll_seconds, roll_bytes,
                            inactivity_seconds, send_key_sha256, unknown_fields, keep_snapshots, min_snapshot_age_seconds, partition_fields, linger_ms, batch_ids)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)`,
        [
          sinkId,
          principal.projectId,
          warehouse.id,
          request.name,
          namespace,
          tableName,
          metadata['table-uuid'],
          request.roll_seconds,
          request.roll_bytes,
          request.inactivity_seconds ?? null,
          sendKeyDigest(sendKey),
          request.unknown_fields,
          request.keep_snapshots,
          request.min_snapshot_age_seconds,
          partition,
          request.linger_ms,
          request.batch_ids,
        ],
      );
    } catch (error) {
      // Asked on the pool: this transaction is aborted.
      if (isPgError(error, PgErrorCode.uniqueViolation)) throw await sinkExists(deps.pool, principal.projectId, warehouse.id, request.name, namespace, tableName);
      throw error;
    }
    await recordAudit(client, {
      projectId: principal.projectId,
      actorKeyId: principal.keyId,
      event: 'sink.create',
      subject: sinkId,
      details: {
        name: request.name,
        warehouse: warehouse.name,
        table: qualified,
        table_uuid: metadata['table-uuid'],
        unknown_fields: request.unknown_fields,
        keep_snapshots: request.keep_snapshots,
        min_snapshot_age_seconds: request.min_snapshot_age_seconds,
        linger_ms: request.linger_ms,
        batch_ids: request.batch_ids,
        ...(partition.length > 0 ? { partition } : {}),
        ...made?.auditDetails,
      },
    });
    return (await queryOne<SinkRow>(client, `SELECT ${SINK_COLUMNS} FROM ${SINK_FROM} WHERE s.id = $1`, [sinkId]))!;
  });
  const [sink] = await describeSinks(deps.pool, deps, [row]);
  return { ...sink!, send_key: sendKey, iam_writes: [] };
}

/** 409 sink_exists naming the live sink that holds the table or the name. */
async function sinkExists(db: Queryable, projectId: string, warehouseId: string, name: string, namespace: string, table: string) {
  const holder = await queryOne<{ id: string; name: string; by_table: boolean }>(
    db,
    `SELECT id, name, (warehouse_id = $2 AND namespace = $4 AND table_name = $5) AS by_table FROM sinks
      WHERE deleted_at IS NULL AND ((warehouse_id = $2 AND namespace = $4 AND table_name = $5) OR (project_id = $1 AND name = $3))
      ORDER BY 3 DESC LIMIT 1`,
    [projectId, warehouseId, name, namespace, table],
  );
  const byTable = holder?.by_table ?? true;
  return apiError('sink_exists', {
    message: byTable
      ? `Sink ${holder?.name ?? ''} already feeds table ${namespace}.${table}; a table has one sink. Use it, or delete it first.`
      : `A sink named ${name} already exists in this project; pick another name.`,
    details: { conflict: byTable ? 'table' : 'name', sink: holder ? { id: holder.id, name: holder.name } : null },
  });
}
