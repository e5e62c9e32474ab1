import {
  ROLL_MAX_BATCHES,
  SINK_ID_PATTERN,
  type BatchStatus,
  type CreatedSink,
  type CreateSinkRequest,
  type DeletedSink,
  type Sink,
  type SinkListQuery,
  type SinkState,
  type SinkUpkeepRun,
} from '@tablemere/contracts';
import { isPgError, PgErrorCode, query, queryOne, transaction, type Pool, type Queryable } from '@tablemere/db';
import { DATA_FORMAT_VERSIONS, isIcebergError, type RestCatalog, type TableMetadata } from '@tablemere/iceberg';
import { batchIdOfKey, rejectsPrefix, segmentIdOfKey, sinkPrefix } from '@tablemere/store';
import type { FastifyBaseLogger } from 'fastify';
import { apiError, tableNotFound } from '../errors.ts';
import { recordAudit } from './audit.ts';
import type { CatalogConnections } from './catalogs.ts';
import type { IntakeStores } from './intake/stores.ts';
import type { Principal } from './principal.ts';
import type { SecretBox } from './secrets.ts';
import { receivedText } from './intake/ledger.ts';
import { sinkPartition } from './sink-partition.ts';
import { generateSinkCredentials, sendKeyDigest } from './send-keys.ts';
import { listTables } from './tables.ts';
import { openWarehouse } from './warehouses.ts';

export interface SinkRow {
  id: string;
  project_id: string;
  warehouse_id: string;
  warehouse_name: string;
  name: string;
  namespace: string;
  table_name: string;
  table_uuid: string;
  partition_fields: string[];
  roll_seconds: number;
  /** bigint columns arrive as strings. */
  roll_bytes: string;
  inactivity_seconds: number | null;
  unknown_fields: Sink['unknown_fields'];
  linger_ms: number;
  state: SinkState;
  last_roll: Sink['last_roll'];
  roll_error: Sink['roll_error'];
  /** Runs recorded before orphan removal existed have no orphan_files_deleted. */
  last_upkeep: (Omit<SinkUpkeepRun, 'orphan_files_deleted'> & { orphan_files_deleted?: number }) | null;
  keep_snapshots: number;
  min_snapshot_age_seconds: number;
  rejects_rows_total: string;
  rejects_batches: string;
  rejects_last_at: Date | null;
  key_rotated_at: Date | null;
  /** Null once the old key stopped, whether or not the sweep has cleared it yet. */
  old_key_stops_at: Date | null;
  created_at: Date;
  deleted_at: Date | null;
}

/** The columns of SinkRow: the sink and its warehouse's name (never a key digest). */
export const SINK_COLUMNS = `s.id, s.project_id, s.warehouse_id, w.name AS warehouse_name, s.name, s.namespace, s.table_name, s.table_uuid, s.partition_fields,
  s.roll_seconds, s.roll_bytes, s.inactivity_seconds, s.unknown_fields, s.linger_ms, s.state, s.last_roll, s.roll_error, s.last_upkeep, s.keep_snapshots, s.min_snapshot_age_seconds,
  s.rejects_rows_total, s.rejects_batches, s.rejects_last_at, s.key_rotated_at, CASE WHEN s.previous_key_stops_at > now() THEN s.previous_key_stops_at END AS old_key_stops_at,
  s.created_at, s.deleted_at`;
export const SINK_FROM = 'sinks s JOIN warehouses w ON w.id = s.warehouse_id';

/** What describing a sink needs besides the database. */
export interface SinkViewContext {
  publicUrl: string;
  /** Each warehouse's intake store: where its sinks' rejects are. */
  intakes: IntakeStores;
}

interface LagRow {
  sink_id: string;
  batches: number;
  bytes: string;
  oldest: Date | null;
  seconds_behind: number | null;
}

interface ReceivedRow {
  sink_id: string;
  batches: string;
  rows: string;
  bytes: string;
  last_at: Date | null;
}

const iso = (at: Date | null) => (at ? at.toISOString() : null);

/** The send route of a sink. */
export const ingestUrl = (publicUrl: string, sinkId: string) => `${publicUrl}/v1/sinks/${sinkId}`;

/**
 * Full views of `rows`, with lag (the ledger's pending batches) and received (the usage
 * counters, all months) read in two grouped queries for all of them.
 */
export async function describeSinks(db: Queryable, context: SinkViewContext, rows: SinkRow[]): Promise<Sink[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((row) => row.id);
  const warehouseIds = [...new Set(rows.map((row) => row.warehouse_id))];
  const intakes = new Map(await Promise.all(warehouseIds.map(async (id) => [id, await context.intakes.of(id)] as const)));
  const [lags, received] = await Promise.all([
    query<LagRow>(
      db,
      `SELECT sink_id, count(*)::int AS batches, coalesce(sum(bytes), 0)::text AS bytes, min(received_at) AS oldest,
              floor(extract(epoch FROM now() - min(received_at)))::int AS seconds_behind
         FROM sink_batches WHERE sink_id = ANY($1) AND state = 'pending' GROUP BY sink_id`,
      [ids],
    ),
    query<ReceivedRow>(
      db,
      `SELECT sink_id, sum(batches)::text AS batches, sum(rows_accepted)::text AS rows, sum(bytes)::text AS bytes,
              max(last_received_at) AS last_at
         FROM usage_ingest WHERE sink_id = ANY($1) GROUP BY sink_id`,
      [ids],
    ),
  ]);
  return rows.map((row) => {
    const lag = lags.find((l) => l.sink_id === row.id);
    const got = received.find((r) => r.sink_id === row.id);
    return {
      id: row.id,
      name: row.name,
      warehouse: row.warehouse_name,
      table: `${row.namespace}.${row.table_name}`,
      table_uuid: row.table_uuid,
      partition: row.partition_fields,
      state: row.state,
      ingest_url: ingestUrl(context.publicUrl, row.id),
      roll: {
        roll_seconds: row.roll_seconds,
        roll_bytes: Number(row.roll_bytes),
        inactivity_seconds: row.inactivity_seconds,
        max_batches: ROLL_MAX_BATCHES,
      },
      unknown_fields: row.unknown_fields,
      linger_ms: row.linger_ms,
      lag: {
        batches_waiting: lag?.batches ?? 0,
        bytes_waiting: Number(lag?.bytes ?? 0),
        oldest_waiting_at: iso(lag?.oldest ?? null),
        seconds_behind: Math.max(0, lag?.seconds_behind ?? 0),
      },
      received: {
        batches: Number(got?.batches ?? 0),
        rows: Number(got?.rows ?? 0),
        bytes: Number(got?.bytes ?? 0),
        last_at: iso(got?.last_at ?? null),
      },
      last_roll: row.last_roll,
      roll_error: row.roll_error,
      rejects: {
        rows_total: Number(row.rejects_rows_total),
        batches_with_rejects: Number(row.rejects_batches),
        last_at: iso(row.rejects_last_at),
        prefix: intakes.get(row.warehouse_id)!.uri(rejectsPrefix(row.id)),
      },
      upkeep: {
        keep_snapshots: row.keep_snapshots,
        min_snapshot_age_seconds: row.min_snapshot_age_seconds,
        last_run: row.last_upkeep && { ...row.last_upkeep, orphan_files_deleted: row.last_upkeep.orphan_files_deleted ?? 0 },
      },
      key_rotation: { rotated_at: iso(row.key_rotated_at), old_key_stops_at: iso(row.old_key_stops_at) },
      created_at: row.created_at.toISOString(),
      deleted_at: iso(row.deleted_at),
    };
  });
}

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

/** A table the same request just created for the sink (see sink-table.ts): used as loaded, and named in the audit event. */
export interface MadeTable {
  metadata?: TableMetadata;
  auditDetails?: Record<string, unknown>;
}


/**
 * Creates a sink for an existing table (partitioned or not; a `partition` is checked on it and
 * applied by the first roll). Reads the table through the warehouse's catalog and commits nothing to it; no identity is created anywhere. The send
 * key is in the answer and nowhere else.
 */
export async function createSink(deps: CreateSinkDeps, principal: Principal, request: CreateSinkRequest, made: MadeTable = {}): Promise<CreatedSink> {
  const warehouse = await openWarehouse(deps.pool, deps.secrets, principal.projectId, request.warehouse);
  const { namespace, name: tableName } = request.table;
  const qualified = `${namespace}.${tableName}`;
  const metadata = made.metadata ?? (await loadTargetTable(await deps.catalogs.get(warehouse), namespace, tableName));
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
                            inactivity_seconds, send_key_sha256, unknown_fields, keep_snapshots, min_snapshot_age_seconds, partition_fields, linger_ms)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
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
        ...(partition.length > 0 ? { partition } : {}),
        ...made.auditDetails,
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

/** The project's sinks, oldest first: live ones, or all with `include_deleted`. */
export async function listSinks(db: Queryable, context: SinkViewContext, projectId: string, filter: SinkListQuery): Promise<Sink[]> {
  const values: unknown[] = [projectId];
  let where = 's.project_id = $1';
  if (!filter.include_deleted) where += ' AND s.deleted_at IS NULL';
  if (filter.stalled) where += ' AND s.roll_error IS NOT NULL';
  if (filter.warehouse !== undefined) {
    values.push(filter.warehouse);
    where += ` AND w.name = $${values.length}`;
  }
  const rows = await query<SinkRow>(db, `SELECT ${SINK_COLUMNS} FROM ${SINK_FROM} WHERE ${where} ORDER BY s.created_at, s.id`, values);
  return describeSinks(db, context, rows);
}

/**
 * A project's sink by `{id|name}`: an id finds the sink even once deleted, a name only the
 * live sink of that name. 404 sink_not_found otherwise.
 */
export async function findSink(db: Queryable, projectId: string, ref: string): Promise<SinkRow> {
  const byId = SINK_ID_PATTERN.test(ref);
  const row = await queryOne<SinkRow>(
    db,
    `SELECT ${SINK_COLUMNS} FROM ${SINK_FROM} WHERE s.project_id = $1 AND ${byId ? 's.id = $2' : 's.name = $2 AND s.deleted_at IS NULL'}`,
    [projectId, ref],
  );
  if (!row) {
    throw apiError('sink_not_found', {
      message: `No sink ${byId ? 'with id' : 'named'} ${ref} in this project; list them with GET /v1/sinks.`,
      details: { sink: ref },
    });
  }
  return row;
}

export interface DeleteSinkDeps {
  pool: Pool;
  intakes: IntakeStores;
  log: FastifyBaseLogger;
}

/**
 * Deletes a live sink: its keys (a rotation's old key too) stop working when the transaction
 * commits (the send route reads deleted_at), its pending batches become 'discarded', claims
 * still being stored are dropped, then its batch objects are removed from intake. The table
 * is not touched, nor the rejects files (the producer may still read them).
 */
export async function deleteSink(deps: DeleteSinkDeps, principal: Principal, ref: string): Promise<DeletedSink> {
  const target = await findSink(deps.pool, principal.projectId, ref);
  if (target.deleted_at) throw apiError('sink_not_found', { message: `Sink ${ref} is already deleted.`, details: { sink: ref } });
  const { deletedAt, discarded } = await transaction(deps.pool, async (client) => {
    const deleted = await queryOne<{ deleted_at: Date }>(
      client,
      `UPDATE sinks SET state = 'deleted', deleted_at = now(), previous_key_sha256 = NULL, previous_key_stops_at = NULL
        WHERE id = $1 AND deleted_at IS NULL RETURNING deleted_at`,
      [target.id],
    );
    if (!deleted) throw apiError('sink_not_found', { message: `Sink ${ref} is already deleted.`, details: { sink: ref } });
    const pending = await query(
      client,
      `UPDATE sink_batches SET state = 'discarded', discarded_at = now() WHERE sink_id = $1 AND state = 'pending' RETURNING 1`,
      [target.id],
    );
    await query(client, `DELETE FROM sink_batches WHERE sink_id = $1 AND state = 'storing'`, [target.id]);
    await recordAudit(client, {
      projectId: principal.projectId,
      actorKeyId: principal.keyId,
      event: 'sink.delete',
      subject: target.id,
      details: { name: target.name, table: `${target.namespace}.${target.table_name}`, pending_batches_discarded: pending.length },
    });
    return { deletedAt: deleted.deleted_at, discarded: pending.length };
  });
  const cleared = await clearIntake(deps, target);
  return {
    id: target.id,
    name: target.name,
    state: 'deleted',
    deleted_at: deletedAt.toISOString(),
    pending_batches_discarded: discarded,
    intake_objects_removed: cleared.removed,
    intake_cleared: cleared.complete,
  };
}

/**
 * Removes a sink's intake objects (segments, and batch objects of the one-object layout). The store's listing is the truth (an object
 * can exist without a pending ledger row after an ambiguous write); rejects stay. A store
 * failure is logged and reported, never thrown: the sink is deleted either way.
 */
async function clearIntake(deps: DeleteSinkDeps, sink: SinkRow): Promise<{ removed: number; complete: boolean }> {
  const sinkId = sink.id;
  let removed = 0;
  try {
    const intake = await deps.intakes.of(sink.warehouse_id);
    for await (const page of intake.list(sinkPrefix(sinkId), { delimiter: '/' })) {
      const keys = page.objects.map((o) => o.key).filter((key) => segmentIdOfKey(sinkId, key) !== undefined || batchIdOfKey(sinkId, key) !== undefined);
      const result = await intake.deleteMany(keys);
      removed += result.deleted.length;
      if (result.failed.length > 0) {
        deps.log.warn({ sink_id: sinkId, failed: result.failed.slice(0, 10) }, 'some intake objects of a deleted sink were not removed');
        return { removed, complete: false };
      }
    }
    return { removed, complete: true };
  } catch (error) {
    deps.log.warn({ sink_id: sinkId, err: error }, 'intake objects of a deleted sink could not be removed');
    return { removed, complete: false };
  }
}

interface BatchRow {
  state: 'storing' | 'pending' | 'committed' | 'discarded';
  received_text: string;
  bytes: string;
  rows: number;
  rejected: number;
  rejected_rows: number | null;
  snapshot_id: string | null;
  committed_at: Date | null;
}

/**
 * Where a batch is. A claim still being stored is `unknown`: it was never accepted, and the
 * producer should send it again under the same id. A batch whose every row a roll refused is
 * `rejected`. Ledger rows go 7 days after their roll, and then the batch is `unknown` too.
 */
export async function batchStatus(db: Queryable, sink: SinkRow, batchId: string): Promise<BatchStatus> {
  const row = await queryOne<BatchRow>(
    db,
    `SELECT state, ${receivedText()} AS received_text, bytes, rows, rejected, rejected_rows, snapshot_id, committed_at
       FROM sink_batches WHERE sink_id = $1 AND batch_id = $2`,
    [sink.id, batchId],
  );
  if (!row || row.state === 'storing') {
    return { sink_id: sink.id, batch_id: batchId, state: 'unknown', received_at: null, bytes: null, rows: null, rejected_rows: null, snapshot_id: null, committed_at: null };
  }
  // The ledger's rows are the batch's objects, `rejected` the elements that are not: all stored.
  const elements = row.rows + row.rejected;
  const everyRowRejected = row.state === 'committed' && row.rejected_rows !== null && row.rejected_rows >= elements;
  return {
    sink_id: sink.id,
    batch_id: batchId,
    state: everyRowRejected ? 'rejected' : row.state,
    received_at: row.received_text,
    bytes: Number(row.bytes),
    rows: elements,
    rejected_rows: row.rejected_rows,
    snapshot_id: row.snapshot_id,
    committed_at: iso(row.committed_at),
  };
}
