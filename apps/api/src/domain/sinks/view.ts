import { ROLL_MAX_BATCHES, type Sink, type SinkState, type SinkUpkeepRun } from '@tablemere/contracts';
import { query, type Queryable } from '@tablemere/db';
import { rejectsPrefix } from '@tablemere/store';
import type { IntakeStores } from '../intake/stores.ts';

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
  batch_ids: Sink['batch_ids'];
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
  s.roll_seconds, s.roll_bytes, s.inactivity_seconds, s.unknown_fields, s.linger_ms, s.batch_ids, s.state, s.last_roll, s.roll_error, s.last_upkeep, s.keep_snapshots, s.min_snapshot_age_seconds,
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
      batch_ids: row.batch_ids,
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
