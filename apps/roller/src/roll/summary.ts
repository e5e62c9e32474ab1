import type { Snapshot } from '@tablemere/iceberg';

/**
 * The snapshot summary keys a roll commits, the exactly-once ledger every reader can see.
 *
 *   tablemere.sink.id             the sink id
 *   tablemere.sink.batches        the consumed batch ids, comma-separated, in roll order
 *                                 (batch ids are [A-Za-z0-9._:-], so a comma never occurs in one)
 *   tablemere.sink.batch_rows     per consumed batch, in the same order, `<rows>:<rejected_rows>`,
 *                                 comma-separated: what a recovering roller reports for it
 *   tablemere.sink.rows           rows appended by this snapshot
 *   tablemere.sink.rejected_rows  rows of the consumed batches written to rejects files
 *   tablemere.sink.rolled_at      when the roll committed (RFC 3339, the roller's clock)
 */
export const SUMMARY_KEYS = {
  id: 'tablemere.sink.id',
  batches: 'tablemere.sink.batches',
  batchRows: 'tablemere.sink.batch_rows',
  rows: 'tablemere.sink.rows',
  rejectedRows: 'tablemere.sink.rejected_rows',
  rolledAt: 'tablemere.sink.rolled_at',
} as const;

export interface BatchCount {
  batch_id: string;
  rows: number;
  rejected_rows: number;
}

export function sinkSummary(sinkId: string, batches: readonly BatchCount[], rolledAt: Date): Record<string, string> {
  const rows = batches.reduce((sum, b) => sum + b.rows, 0);
  const rejected = batches.reduce((sum, b) => sum + b.rejected_rows, 0);
  return {
    [SUMMARY_KEYS.id]: sinkId,
    [SUMMARY_KEYS.batches]: batches.map((b) => b.batch_id).join(','),
    [SUMMARY_KEYS.batchRows]: batches.map((b) => `${b.rows}:${b.rejected_rows}`).join(','),
    [SUMMARY_KEYS.rows]: String(rows),
    [SUMMARY_KEYS.rejectedRows]: String(rejected),
    [SUMMARY_KEYS.rolledAt]: rolledAt.toISOString(),
  };
}

/** The batch ids a sink snapshot consumed. */
export function summaryBatchIds(summary: Snapshot['summary']): string[] {
  const text = summary[SUMMARY_KEYS.batches];
  return text === undefined || text === '' ? [] : text.split(',');
}

/**
 * Per-batch counts of a sink snapshot, or undefined when the summary does not carry them
 * in the expected shape (then a recovery reports the batches with zero counts).
 */
export function summaryBatchCounts(summary: Snapshot['summary']): BatchCount[] | undefined {
  const ids = summaryBatchIds(summary);
  const counts = (summary[SUMMARY_KEYS.batchRows] ?? '').split(',');
  if (ids.length === 0 || counts.length !== ids.length) return undefined;
  const out: BatchCount[] = [];
  for (const [i, id] of ids.entries()) {
    const m = /^(\d+):(\d+)$/.exec(counts[i]!);
    if (!m) return undefined;
    out.push({ batch_id: id, rows: Number(m[1]), rejected_rows: Number(m[2]) });
  }
  return out;
}
