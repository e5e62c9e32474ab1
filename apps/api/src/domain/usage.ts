import type { SinkIngestUsage, Usage, WarehouseStorageUsage } from '@tablemere/contracts';
import { query, queryOne, type Queryable } from '@tablemere/db';

/**
 * Adds batches to the month's (UTC) ingest counters: an INSERT over `source`, a relation
 * (a CTE's name) with project_id, sink_id, bytes, wire_bytes, rows, rejected and received_at
 * per batch (`bytes` stored, decoded; `wire_bytes` as sent, compressed or not).
 * Every element stored counts as accepted, the ones that are not objects (`rejected`) too:
 * rows are rejected by the roll only, and its report adds them to rows_rejected.
 * Counter rows are locked in one order by every statement, so two writers cannot deadlock.
 */
export const countIngestSql = (source: string) => `
  INSERT INTO usage_ingest AS u (project_id, sink_id, month, bytes, wire_bytes, batches, rows_accepted, rows_rejected, last_received_at)
  SELECT project_id, sink_id, date_trunc('month', received_at AT TIME ZONE 'UTC')::date AS month,
         sum(bytes), sum(wire_bytes), count(*), sum(rows + rejected), 0, max(received_at)
    FROM ${source} GROUP BY 1, 2, 3
   ORDER BY 1, 2, 3
  ON CONFLICT (project_id, sink_id, month) DO UPDATE SET
    bytes = u.bytes + EXCLUDED.bytes,
    wire_bytes = u.wire_bytes + EXCLUDED.wire_bytes,
    batches = u.batches + EXCLUDED.batches,
    rows_accepted = u.rows_accepted + EXCLUDED.rows_accepted,
    rows_rejected = u.rows_rejected + EXCLUDED.rows_rejected,
    last_received_at = greatest(u.last_received_at, EXCLUDED.last_received_at)`;

interface SinkUsageRow {
  sink_id: string;
  name: string | null;
  bytes: string;
  wire_bytes: string;
  batches: string;
  rows_accepted: string;
  rows_rejected: string;
}

interface StorageRow {
  warehouse: string;
  bytes: string;
  objects: string;
  measured_at: Date;
}

/**
 * The project's usage: this month's (UTC) intake per sink from usage_ingest (deleted sinks
 * included: their bytes were accepted), and each warehouse's newest storage measurement.
 */
export async function projectUsage(db: Queryable, projectId: string): Promise<Usage> {
  const { month } = (await queryOne<{ month: string }>(db, `SELECT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM') AS month`))!;
  const sinks = await query<SinkUsageRow>(
    db,
    `SELECT u.sink_id, s.name, u.bytes, u.wire_bytes, u.batches, u.rows_accepted, u.rows_rejected
     FROM usage_ingest u LEFT JOIN sinks s ON s.id = u.sink_id
     WHERE u.project_id = $1 AND u.month = to_date($2, 'YYYY-MM')
     ORDER BY u.bytes DESC, u.sink_id`,
    [projectId, month],
  );
  const storage = await query<StorageRow>(
    db,
    `SELECT DISTINCT ON (m.warehouse_id) w.name AS warehouse, m.bytes, m.objects, m.measured_at
     FROM storage_measurements m JOIN warehouses w ON w.id = m.warehouse_id
     WHERE m.project_id = $1
     ORDER BY m.warehouse_id, m.measured_at DESC, m.id DESC`,
    [projectId],
  );
  const bySink = sinks.map(
    (row): SinkIngestUsage => ({
      sink_id: row.sink_id,
      name: row.name,
      bytes: Number(row.bytes),
      wire_bytes: Number(row.wire_bytes),
      batches: Number(row.batches),
      rows_accepted: Number(row.rows_accepted),
      rows_rejected: Number(row.rows_rejected),
    }),
  );
  const sum = (field: keyof Omit<SinkIngestUsage, 'sink_id' | 'name'>) => bySink.reduce((total, sink) => total + sink[field], 0);
  const byWarehouse = storage
    .map(
      (row): WarehouseStorageUsage => ({
        warehouse: row.warehouse,
        bytes: Number(row.bytes),
        objects: Number(row.objects),
        measured_at: row.measured_at.toISOString(),
      }),
    )
    .sort((a, b) => a.warehouse.localeCompare(b.warehouse));
  return {
    month,
    ingest_bytes: {
      month_to_date: sum('bytes'),
      wire_month_to_date: sum('wire_bytes'),
      batches: sum('batches'),
      rows_accepted: sum('rows_accepted'),
      rows_rejected: sum('rows_rejected'),
      by_sink: bySink,
    },
    storage: { bytes: byWarehouse.reduce((total, w) => total + w.bytes, 0), by_warehouse: byWarehouse },
    enforced: false,
  };
}
