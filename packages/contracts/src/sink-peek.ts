import { z } from 'zod';
import { StorableText, Timestamp } from './names.ts';
import { SinkId } from './sinks.ts';

/**
 * Read-only views into a sink's intake for its owner: the rows the rolls rejected, and the
 * rows still waiting. Both read the intake bucket without changing it. Rows come back with
 * their original bytes (numbers keep every digit), inlined as JSON.
 */

const Limit = (fallback: number, max: number) => z.coerce.number().int().min(1).max(max).default(fallback);

export const REJECTS_PAGE_DEFAULT = 100;
export const REJECTS_PAGE_MAX = 1000;

/** GET /v1/sinks/{id|name}/rejects?since=&limit=&cursor= */
export const RejectsQuery = z.strictObject({
  /** Only rejects files written (by a roll) at or after this instant. */
  since: Timestamp.optional(),
  limit: Limit(REJECTS_PAGE_DEFAULT, REJECTS_PAGE_MAX),
  /** next_cursor of the previous page, as given. */
  cursor: StorableText.min(1).max(1024).optional(),
});
export type RejectsQuery = z.infer<typeof RejectsQuery>;

/**
 * One rejected row: the line a roll wrote to its rejects file, `rejects/<id>.ndjson`, one per
 * roll, named by the first segment (or batch) the roll took (`batch_id, row, reason, field,
 * expected, got, message`, and `row_base64` for a batch that was not text), plus where it sits
 * in that file (`line`) and when the file was written (`written_at`).
 */
export const RejectedRow = z.looseObject({
  batch_id: z.string(),
  line: z.number().int().positive(),
  written_at: Timestamp,
  /** The row as the producer sent it; for batch_unreadable, the line as a string (or null, see row_base64). */
  row: z.unknown(),
  reason: z.string(),
  /** Dotted path of the field at fault; "" for the whole row. */
  field: z.string(),
  expected: z.string().nullable(),
  got: z.string().nullable(),
  message: z.string(),
});
export type RejectedRow = z.infer<typeof RejectedRow>;

/**
 * A page of rejected rows in file order: files in the store's key order (the order of the rolls
 * since segments, whose ids start with their time; before them, by batch id), rows in each file
 * in order. `next_cursor` is null on the last page; a cursor stays valid while new
 * rejects are written.
 */
export const RejectsPage = z.object({
  sink_id: SinkId,
  /** `s3://<the sink's intake bucket>/_sink/<id>/rejects/`: where the files are, for engines reading them directly. */
  prefix: z.string(),
  rejects: z.array(RejectedRow),
  next_cursor: z.string().nullable(),
});
export type RejectsPage = z.infer<typeof RejectsPage>;

export const PENDING_ROWS_DEFAULT = 20;
export const PENDING_ROWS_MAX = 1000;

/** GET /v1/sinks/{id|name}/pending?limit= */
export const PendingQuery = z.strictObject({
  limit: Limit(PENDING_ROWS_DEFAULT, PENDING_ROWS_MAX),
});
export type PendingQuery = z.infer<typeof PendingQuery>;

export const PendingRow = z.object({
  batch_id: z.string(),
  received_at: Timestamp,
  /** 1-based position of the row in its batch's stored object. */
  line: z.number().int().positive(),
  /** The row as the producer sent it. */
  row: z.unknown(),
});
export type PendingRow = z.infer<typeof PendingRow>;

/**
 * The newest rows waiting for the roll, oldest of them first (like `tail`), read from the
 * intake without consuming anything. `truncated` says older pending rows exist beyond `limit`
 * (or beyond the answer's size bound).
 */
export const PendingRows = z.object({
  sink_id: SinkId,
  batches_waiting: z.number().int().nonnegative(),
  rows_waiting: z.number().int().nonnegative(),
  rows: z.array(PendingRow),
  truncated: z.boolean(),
});
export type PendingRows = z.infer<typeof PendingRows>;
