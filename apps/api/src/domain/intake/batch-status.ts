import type { BatchStatus } from '@tablemere/contracts';
import { queryOne, type Queryable } from '@tablemere/db';
import { receivedText } from './ledger.ts';

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
export async function batchStatus(db: Queryable, sinkId: string, batchId: string): Promise<BatchStatus> {
  const row = await queryOne<BatchRow>(
    db,
    `SELECT state, ${receivedText()} AS received_text, bytes, rows, rejected, rejected_rows, snapshot_id, committed_at
       FROM sink_batches WHERE sink_id = $1 AND batch_id = $2`,
    [sinkId, batchId],
  );
  if (!row || row.state === 'storing') {
    return { sink_id: sinkId, batch_id: batchId, state: 'unknown', received_at: null, bytes: null, rows: null, rejected_rows: null, snapshot_id: null, committed_at: null };
  }
  // The ledger's rows are the batch's objects, `rejected` the elements that are not: all stored.
  const elements = row.rows + row.rejected;
  const everyRowRejected = row.state === 'committed' && row.rejected_rows !== null && row.rejected_rows >= elements;
  return {
    sink_id: sinkId,
    batch_id: batchId,
    state: everyRowRejected ? 'rejected' : row.state,
    received_at: row.received_text,
    bytes: Number(row.bytes),
    rows: elements,
    rejected_rows: row.rejected_rows,
    snapshot_id: row.snapshot_id,
    committed_at: row.committed_at?.toISOString() ?? null,
  };
}
