import {
  catalogAuthToWire,
  ROLL_MAX_BATCHES,
  type DueReason,
  type InternalSink,
  type InternalSinkList,
  type InternalWarehouse,
  type UpkeepOutcome,
} from '@tablemere/contracts';
import { query, type Queryable } from '@tablemere/db';
import { rejectsPrefix, sinkPrefix } from '@tablemere/store';
import { intakePlacement } from '../intake/stores.ts';
import type { SecretBox } from '../secrets.ts';
import { openWarehouses, type WarehouseAccess } from '../warehouses.ts';

interface ViewRow {
  id: string;
  project_id: string;
  name: string;
  state: string;
  namespace: string;
  table_name: string;
  table_uuid: string | null;
  partition_fields: string[];
  warehouse_id: string;
  roll_seconds: number;
  roll_bytes: string;
  inactivity_seconds: number | null;
  unknown_fields: InternalSink['unknown_fields'];
  last_roll_at: string | null;
  roll_error: InternalSink['roll_error'];
  last_upkeep_at: string | null;
  last_upkeep_outcome: UpkeepOutcome | null;
  keep_snapshots: number;
  min_snapshot_age_seconds: number;
  batches: number;
  bytes: string;
  oldest_text: string | null;
  newest_text: string | null;
  due_reasons: DueReason[];
  lease_roller_id: string | null;
  lease_expires_at: Date | null;
  as_of: Date;
}

/** A timestamp column as RFC 3339 UTC with microseconds, the intake's precision (a JS Date keeps milliseconds). */
const MICROS = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/**
 * Live sinks with their pending-batch aggregates and the policy rules that make each due, in
 * the contract's order: the roll policy, decided here alone, in Postgres against its clock.
 * Only pending ledger rows are visited (a partial index holds exactly those), so idle sinks
 * cost nothing, and the store is never listed. A sink is due only while `active` with at
 * least one pending batch, when the oldest has waited roll_seconds, the bytes reach
 * roll_bytes, the batches reach the fixed cap, or (inactivity_seconds set) nothing new
 * arrived for that long. `$4` narrows it to one sink (the roller asking whether a sink it
 * just rolled is still due). Most overdue first.
 */
const VIEW_SQL = `
WITH pending AS (
  SELECT sink_id, count(*)::int AS batches, sum(bytes)::bigint AS bytes, min(received_at) AS oldest, max(received_at) AS newest
  FROM sink_batches WHERE state = 'pending' AND ($4::text IS NULL OR sink_id = $4) GROUP BY sink_id
), view AS (
  SELECT s.id, s.project_id, s.name, s.state, s.namespace, s.table_name, s.table_uuid, s.warehouse_id,
         s.roll_seconds, s.roll_bytes, s.inactivity_seconds, s.unknown_fields, s.last_roll->>'at' AS last_roll_at, s.roll_error, s.partition_fields,
         s.last_upkeep->>'at' AS last_upkeep_at, s.last_upkeep->>'outcome' AS last_upkeep_outcome,
         s.keep_snapshots, s.min_snapshot_age_seconds,
         coalesce(p.batches, 0) AS batches, coalesce(p.bytes, 0) AS bytes, p.oldest, p.newest,
         (s.state = 'active' AND coalesce(p.batches, 0) > 0) AS rollable
  FROM sinks s LEFT JOIN pending p ON p.sink_id = s.id
  WHERE s.deleted_at IS NULL AND ($4::text IS NULL OR s.id = $4)
), judged AS (
  SELECT view.*, CASE WHEN rollable THEN array_remove(ARRAY[
           CASE WHEN oldest <= now() - make_interval(secs => roll_seconds) THEN 'roll_seconds' END,
           CASE WHEN bytes >= roll_bytes THEN 'roll_bytes' END,
           CASE WHEN batches >= $1 THEN 'max_batches' END,
           CASE WHEN newest <= now() - make_interval(secs => inactivity_seconds) THEN 'inactivity' END
         ], NULL) ELSE '{}' END AS due_reasons
  FROM view
)
SELECT judged.*, ${MICROS('oldest')} AS oldest_text, ${MICROS('newest')} AS newest_text,
       l.roller_id AS lease_roller_id, l.expires_at AS lease_expires_at, now() AS as_of
FROM judged LEFT JOIN sink_leases l ON l.sink_id = judged.id AND l.expires_at > now()
WHERE NOT $2::boolean OR cardinality(due_reasons) > 0
ORDER BY oldest NULLS LAST, id
LIMIT $3`;

function warehouseWire(warehouse: WarehouseAccess): InternalWarehouse {
  return {
    id: warehouse.id,
    name: warehouse.name,
    rest_uri: warehouse.restUri,
    warehouse: warehouse.warehouse,
    auth: catalogAuthToWire(warehouse.auth),
    s3: {
      endpoint: warehouse.s3.endpoint,
      region: warehouse.s3.region,
      access_key_id: warehouse.s3.accessKeyId ?? null,
      secret_access_key: warehouse.s3.secretAccessKey ?? null,
      path_style: true,
    },
  };
}

export interface RollerViewOptions {
  /** Only the sinks whose policy says roll now. */
  due: boolean;
  /** Only this sink (none when it is deleted or unknown). */
  sink?: string;
  limit?: number;
  intakeBucket: string;
}

/** The roller's view of the live sinks, with each warehouse's access opened. */
export async function rollerView(db: Queryable, box: SecretBox, options: RollerViewOptions): Promise<InternalSinkList> {
  const rows = await query<ViewRow>(db, VIEW_SQL, [ROLL_MAX_BATCHES, options.due, options.limit ?? null, options.sink ?? null]);
  const warehouseIds = [...new Set(rows.map((row) => row.warehouse_id))];
  const opened = new Map((await openWarehouses(db, box, warehouseIds)).map((w) => [w.id, w]));
  const asOf = rows[0]?.as_of ?? (await query<{ now: Date }>(db, 'SELECT now()'))[0]!.now;
  const sinks = rows.map((row): InternalSink => {
    return {
      id: row.id,
      project_id: row.project_id,
      name: row.name,
      state: row.state,
      namespace: row.namespace,
      table: row.table_name,
      table_uuid: row.table_uuid,
      partition: row.partition_fields,
      policy: {
        roll_seconds: row.roll_seconds,
        roll_bytes: Number(row.roll_bytes),
        inactivity_seconds: row.inactivity_seconds,
        max_batches: ROLL_MAX_BATCHES,
      },
      unknown_fields: row.unknown_fields,
      pending: {
        batches: row.batches,
        bytes: Number(row.bytes),
        oldest_received_at: row.oldest_text,
        newest_received_at: row.newest_text,
      },
      due: row.due_reasons.length > 0,
      due_reasons: row.due_reasons,
      last_roll_at: row.last_roll_at === null ? null : new Date(row.last_roll_at).toISOString(),
      roll_error: row.roll_error,
      upkeep: {
        last_at: row.last_upkeep_at === null ? null : new Date(row.last_upkeep_at).toISOString(),
        last_outcome: row.last_upkeep_outcome,
        keep_snapshots: row.keep_snapshots,
        min_snapshot_age_seconds: row.min_snapshot_age_seconds,
      },
      lease: row.lease_roller_id && row.lease_expires_at ? { roller_id: row.lease_roller_id, expires_at: row.lease_expires_at.toISOString() } : null,
      warehouse: warehouseWire(opened.get(row.warehouse_id)!),
      intake: {
        ...intakePlacement(opened.get(row.warehouse_id)!, options.intakeBucket),
        prefix: sinkPrefix(row.id),
        rejects_prefix: rejectsPrefix(row.id),
      },
    };
  });
  return { enabled: true, as_of: asOf.toISOString(), sinks };
}
