import type { SendResult } from '@tablemere/contracts';
import { queryOne, type Queryable } from '@tablemere/db';

/**
 * The batch ledger (`sink_batches`): one row per (sink, batch id), from the send's claim
 * ('storing') through 'pending' to 'committed' or 'discarded', partitioned by ledger day
 * (migrations/0012_ledger_days.sql).
 */

/** SQL for a received_at column as the API writes it: RFC 3339, UTC, microseconds (Postgres keeps them; a JS Date does not). */
export const receivedText = (column = 'received_at') => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

type Nullable<T> = { [K in keyof T]: T[K] | null };

/** The columns a send's answer is rebuilt from. */
export interface AnswerColumns {
  batch_id: string;
  rows: number;
  rejected: number;
  reasons: number[] | null;
  bytes: string;
  received_text: string;
}

/**
 * A send's answer as the ledger row holds it: all of it but how the request named the batch,
 * which the send route adds from the request (a replay may name it otherwise than the first send).
 */
export type StoredAnswer = Omit<SendResult, 'batch_id_from'>;

/**
 * The answer a batch's send got (or, for a claim a roll consumed before it settled, would have
 * got), rebuilt from its ledger row: replays get it back, field for field.
 */
export function storedAnswer(row: AnswerColumns): StoredAnswer {
  return {
    accepted: row.rows,
    rejected: row.rejected,
    reasons: (row.reasons ?? []).map((index) => ({ index, reason: 'not_an_object' as const })),
    batch_id: row.batch_id,
    bytes: Number(row.bytes),
    received_at: row.received_text,
    state: 'pending',
  };
}

/** A sink's liveness with the ledger row of one of its batch ids (the row's fields null when there is none). */
export interface LedgerEntry extends Nullable<AnswerColumns> {
  live: boolean;
  body_digest: Buffer | null;
  state: 'storing' | 'pending' | 'committed' | 'discarded' | null;
  day: string | null;
  age_seconds: number | null;
  /** The segment the batch was (being) written to; null for the one-object-per-batch layout. */
  segment_id: string | null;
}

const LEDGER_ENTRY_SQL = `
  SELECT s.deleted_at IS NULL AS live, b.body_digest, b.state, b.ledger_day::text AS day,
         b.batch_id, b.rows, b.rejected, b.reasons, b.bytes, ${receivedText('b.received_at')} AS received_text, b.segment_id,
         extract(epoch FROM clock_timestamp() - b.received_at)::float8 AS age_seconds
    FROM sinks s LEFT JOIN sink_batches b ON b.sink_id = s.id AND b.batch_id = $2
   WHERE s.id = $1`;

/** The sink's liveness and the ledger row of (sink, batch), if any; undefined when the sink does not exist. */
export function ledgerEntry(db: Queryable, sinkId: string, batchId: string): Promise<LedgerEntry | undefined> {
  return queryOne<LedgerEntry>(db, LEDGER_ENTRY_SQL, [sinkId, batchId]);
}
