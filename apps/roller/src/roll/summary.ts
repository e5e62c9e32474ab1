import { ROLL_MAX_BATCHES } from '@tablemere/contracts';

/**
 * The snapshot summary keys a roll commits, the exactly-once ledger every reader can see.
 *
 *   tablemere.sink.id             the sink id
 *   tablemere.sink.batches        the consumed batch ids, comma-separated, in roll order
 *                                 (batch ids are [A-Za-z0-9._:-], so a comma never occurs in one)
 *   tablemere.sink.batch_rows     per consumed batch, in the same order, `<rows>:<rejected_rows>`,
 *                                 comma-separated: what a recovering roller reports for it
 *   tablemere.sink.segments       the consumed segments (intake objects of many batches: segment
 *                                 ids, comma-separated); absent when the roll took none, i.e. only
 *                                 batch objects of the one-object-per-batch layout
 *   tablemere.sink.batches_file   instead of the lists above, for a roll of more than 1,000
 *                                 batches or segments: `s3://<intake bucket>/_sink/<sink_id>/rolls/<snapshot_id>.json`,
 *                                 a JSON object holding those keys (and `tablemere.sink.id`,
 *                                 `tablemere.sink.snapshot_id`), written before the commit
 *   tablemere.sink.batch_count    with batches_file: how many batches the roll consumed
 *   tablemere.sink.rows           rows appended by this snapshot
 *   tablemere.sink.rejected_rows  rows of the consumed batches written to rejects files
 *   tablemere.sink.rolled_at      when the roll committed (RFC 3339, the roller's clock)
 *
 * Rolls of at most 1,000 batches carry the lists inline and no other key, exactly as before the
 * sidecar, so readers that predate it keep working for them.
 */
export const SUMMARY_KEYS = {
  id: 'tablemere.sink.id',
  batches: 'tablemere.sink.batches',
  batchRows: 'tablemere.sink.batch_rows',
  segments: 'tablemere.sink.segments',
  batchesFile: 'tablemere.sink.batches_file',
  batchCount: 'tablemere.sink.batch_count',
  rows: 'tablemere.sink.rows',
  rejectedRows: 'tablemere.sink.rejected_rows',
  rolledAt: 'tablemere.sink.rolled_at',
} as const;

/** A sidecar's own key naming the snapshot it belongs to (never in a summary). */
export const SIDECAR_SNAPSHOT_KEY = 'tablemere.sink.snapshot_id';

/** Most batches whose lists go inline in the summary; a larger roll writes a sidecar. */
export const INLINE_BATCHES = ROLL_MAX_BATCHES;

export interface BatchCount {
  batch_id: string;
  rows: number;
  rejected_rows: number;
}

/** A summary, or a sidecar's contents: where the batch lists are read from. */
export type BatchLists = Readonly<Record<string, string | undefined>>;

/** The batch lists (and the segment list, when the roll took segments), as the summary carries them inline and a sidecar holds them. */
export function batchLists(batches: readonly BatchCount[], segments: readonly string[]): Record<string, string> {
  return {
    [SUMMARY_KEYS.batches]: batches.map((b) => b.batch_id).join(','),
    [SUMMARY_KEYS.batchRows]: batches.map((b) => `${b.rows}:${b.rejected_rows}`).join(','),
    ...(segments.length > 0 ? { [SUMMARY_KEYS.segments]: segments.join(',') } : {}),
  };
}

/** Whether a roll's lists fit in its summary, or go to a sidecar. */
export function listsInline(batches: number, segments: number): boolean {
  return batches <= INLINE_BATCHES && segments <= INLINE_BATCHES;
}

/** `batchesFile`: the sidecar's location, required (and only taken) when the lists are not inline. */
export function sinkSummary(sinkId: string, batches: readonly BatchCount[], segments: readonly string[], rolledAt: Date, batchesFile?: string): Record<string, string> {
  const rows = batches.reduce((sum, b) => sum + b.rows, 0);
  const rejected = batches.reduce((sum, b) => sum + b.rejected_rows, 0);
  let lists: Record<string, string>;
  if (listsInline(batches.length, segments.length)) {
    lists = batchLists(batches, segments);
  } else if (batchesFile !== undefined) {
    lists = { [SUMMARY_KEYS.batchesFile]: batchesFile, [SUMMARY_KEYS.batchCount]: String(batches.length) };
  } else {
    throw new Error(`a roll of ${batches.length} batches in ${segments.length} segments names its ids in a sidecar file, and none was given`);
  }
  return {
    [SUMMARY_KEYS.id]: sinkId,
    ...lists,
    [SUMMARY_KEYS.rows]: String(rows),
    [SUMMARY_KEYS.rejectedRows]: String(rejected),
    [SUMMARY_KEYS.rolledAt]: rolledAt.toISOString(),
  };
}

/** The sidecar a sink snapshot's summary names, or undefined when its lists are inline. */
export function summaryBatchesFile(summary: BatchLists): string | undefined {
  return summary[SUMMARY_KEYS.batchesFile];
}

/**
 * The batch ids in `lists`: an inline summary, or a sidecar's contents (see
 * sidecar.ts `resolveBatchLists` for a summary that may name one).
 */
export function summaryBatchIds(lists: BatchLists): string[] {
  const text = lists[SUMMARY_KEYS.batches];
  return text === undefined || text === '' ? [] : text.split(',');
}

/** The segment ids in `lists` (none for a roll of batch objects alone, or one from before segments). */
export function summarySegmentIds(lists: BatchLists): string[] {
  const text = lists[SUMMARY_KEYS.segments];
  return text === undefined || text === '' ? [] : text.split(',');
}

/**
 * Per-batch counts in `lists`, or undefined when they are not there in the expected shape
 * (then a recovery reports the batches with zero counts).
 */
export function summaryBatchCounts(lists: BatchLists): BatchCount[] | undefined {
  const ids = summaryBatchIds(lists);
  const counts = (lists[SUMMARY_KEYS.batchRows] ?? '').split(',');
  if (ids.length === 0 || counts.length !== ids.length) return undefined;
  const out: BatchCount[] = [];
  for (const [i, id] of ids.entries()) {
    const m = /^(\d+):(\d+)$/.exec(counts[i]!);
    if (!m) return undefined;
    out.push({ batch_id: id, rows: Number(m[1]), rejected_rows: Number(m[2]) });
  }
  return out;
}
