import { z } from 'zod';
import { Timestamp } from './names.ts';
import { Sink } from './sinks.ts';

const Count = z.number().int().nonnegative();

/** GET /v1/status takes no query: the page asks for everything and sorts it itself. */
export const StatusQuery = z.strictObject({});

/** A sink's rolls of the last 24 hours, from the roll records and failure reports (both kept 7 days). */
export const SinkLastDay = z.object({
  /** Rolls that committed a snapshot. */
  committed_rolls: Count,
  /** Every roll that failed, whether or not it reached its intent (aborted and taken-over rolls aside). */
  failed_rolls: Count,
  /** The failed rolls by reason (`store_unavailable`, `catalog_unavailable`, …: the roller's failure codes). */
  failure_reasons: z.record(z.string(), Count),
  /** Rows those rolls wrote to the rejects files. */
  rejected_rows: Count,
});
export type SinkLastDay = z.infer<typeof SinkLastDay>;

/** One row of the operator's status page: the sink as GET /v1/sinks shows it, and its last day. */
export const StatusSink = Sink.extend({ last_day: SinkLastDay });
export type StatusSink = z.infer<typeof StatusSink>;

/** GET /v1/status (admin): every live sink of the key's project, for the status page at /status. */
export const OperatorStatus = z.object({
  /** When the figures were read (the API's clock). */
  generated_at: Timestamp,
  /** The backlog caps past which a sink's intake answers 429, to show how near each sink is. */
  backlog_limits: z.object({ max_pending_bytes: Count, max_pending_batches: Count }),
  sinks: z.array(StatusSink),
});
export type OperatorStatus = z.infer<typeof OperatorStatus>;
