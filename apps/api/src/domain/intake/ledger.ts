import type { SendResult } from '@tablemere/contracts';
import { queryOne, type Queryable } from '@tablemere/db';

/**
 * The batch ledger (`sink_batches`): one row per (sink, batch id), from the send's claim
 * ('storing') through 'pending' to 'committed' or 'discarded'.
 */

/** SQL for a received_at column as the API writes it: RFC 3339, UTC, microseconds (Postgres keeps them; a JS Date does not). */
export const receivedText = (column = 'received_at') => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/** A stored answer with its fields in the order of the first answer (jsonb keeps its own order). */
export function storedAnswer(stored: SendResult): SendResult {
  const { accepted, rejected, reasons, batch_id, bytes, received_at, state } = stored;
  return { accepted, rejected, reasons, batch_id, bytes, received_at, state };
}

/** A sink's liveness with the ledger row of one of its batch ids (all null when there is none). */
export interface LedgerEntry {
  live: boolean;
  body_sha256: Buffer | null;
  state: 'storing' | 'pending' | 'committed' | 'discarded' | null;
  response: SendResult | null;
  received_text: string | null;
  age_seconds: number | null;
}

const LEDGER_ENTRY_SQL = `
  SELECT s.deleted_at IS NULL AS live, b.body_sha256, b.state, b.response,
         ${receivedText('b.received_at')} AS received_text,
         extract(epoch FROM clock_timestamp() - b.received_at)::float8 AS age_seconds
    FROM sinks s LEFT JOIN sink_batches b ON b.sink_id = s.id AND b.batch_id = $2
   WHERE s.id = $1`;

/** The sink's liveness and the ledger row of (sink, batch), if any; undefined when the sink does not exist. */
export function ledgerEntry(db: Queryable, sinkId: string, batchId: string): Promise<LedgerEntry | undefined> {
  return queryOne<LedgerEntry>(db, LEDGER_ENTRY_SQL, [sinkId, batchId]);
}
