import { z } from 'zod';
import { StorableText, Timestamp } from './names.ts';

const Count = z.number().int().nonnegative();

/** One sink's share of the month's intake; `name` is null once the sink row is gone. */
export const SinkIngestUsage = z.object({
  sink_id: z.string(),
  name: z.string().nullable(),
  /** The stored rows' bytes (decompressed): what the month's intake is measured by. */
  bytes: Count,
  /** The bodies' bytes as they came over the wire: fewer than `bytes` when sent compressed. */
  wire_bytes: Count,
  batches: Count,
  rows_accepted: Count,
  rows_rejected: Count,
});
export type SinkIngestUsage = z.infer<typeof SinkIngestUsage>;

/** A warehouse's newest storage measurement. */
export const WarehouseStorageUsage = z.object({
  warehouse: z.string(),
  bytes: Count,
  objects: Count,
  measured_at: Timestamp,
});
export type WarehouseStorageUsage = z.infer<typeof WarehouseStorageUsage>;

export const UsageQuery = z.strictObject({});

/**
 * GET /v1/usage: the project's metered figures. Ingest counts the bytes accepted at the
 * intake this calendar month (UTC); rows_accepted every element stored (objects or not),
 * rows_rejected the rows the rolls rejected (not_an_object included). Nothing is enforced yet.
 */
export const Usage = z.object({
  /** `YYYY-MM`, UTC. */
  month: z.string().regex(/^\d{4}-\d{2}$/),
  ingest_bytes: z.object({
    month_to_date: Count,
    /** The same batches' bytes as sent over the wire (compressed or not). */
    wire_month_to_date: Count,
    batches: Count,
    rows_accepted: Count,
    rows_rejected: Count,
    by_sink: z.array(SinkIngestUsage),
  }),
  storage: z.object({
    /** Sum of each warehouse's newest measurement; warehouses never measured count 0. */
    bytes: Count,
    by_warehouse: z.array(WarehouseStorageUsage),
  }),
  enforced: z.literal(false),
});
export type Usage = z.infer<typeof Usage>;

/** `{warehouse}` in POST /v1/warehouses/{warehouse}/measure: the name, or the id. */
export const MeasureParams = z.strictObject({ warehouse: StorableText.min(1).max(64) });

/** One listing of a warehouse's bucket, skipping the intake prefix. */
export const StorageMeasurement = z.object({
  warehouse: z.string(),
  warehouse_id: z.uuid(),
  bucket: z.string(),
  /** The key prefix measured; '' for the whole bucket. */
  prefix: z.string(),
  bytes: Count,
  objects: Count,
  /** Prefixes left out of the listing entirely (never listed, never counted). */
  skipped_prefixes: z.array(z.string()),
  trigger: z.enum(['request', 'sweep']),
  duration_ms: Count,
  measured_at: Timestamp,
});
export type StorageMeasurement = z.infer<typeof StorageMeasurement>;
