import type { Snapshot } from '@tablemere/iceberg';
import { isStoreError, rollFileKey } from '@tablemere/store';
import { RollError, toRollError } from '../errors.ts';
import { checkpoint, type RollContext } from './context.ts';
import { type BatchCount, type BatchLists, batchLists, SIDECAR_SNAPSHOT_KEY, SUMMARY_KEYS, summaryBatchesFile, summaryBatchIds } from './summary.ts';

/**
 * The sidecar of a roll of more than 1,000 batches or segments: its batch ids and counts and its segment ids, written to the
 * intake (`_sink/<sink_id>/rolls/<snapshot_id>.json`) before the intent and the commit, and
 * named by the snapshot's summary. It lives where the table owner's expiry, compaction and
 * orphan-file removal never look, and it is kept while any batch it names could still be in
 * the intake (see sweep.ts).
 */

/**
 * Writes the sidecar of snapshot `snapshotId` (again on a later validation round: the same
 * batches, counts against the new schema) and returns its location for the summary.
 */
export async function writeSidecar(ctx: RollContext, snapshotId: bigint, batches: readonly BatchCount[], segments: readonly string[]): Promise<string> {
  checkpoint(ctx);
  const key = rollFileKey(ctx.sink.id, snapshotId);
  const contents = { [SUMMARY_KEYS.id]: ctx.sink.id, [SIDECAR_SNAPSHOT_KEY]: snapshotId.toString(), ...batchLists(batches, segments) };
  try {
    await ctx.intake.put(key, Buffer.from(JSON.stringify(contents)), { contentType: 'application/json' });
  } catch (error) {
    throw toRollError(error, 'intake');
  }
  return ctx.intake.uri(key);
}

/**
 * The batch lists of a sink snapshot: its summary when they are inline, else the sidecar it
 * names. A sidecar that is gone, elsewhere than this sink's own place, or not this snapshot's
 * ends the roll (`sidecar_missing`): the batches that snapshot consumed cannot be told from
 * new ones, and guessing could append one twice.
 */
export async function resolveBatchLists(ctx: RollContext, snapshot: Snapshot): Promise<BatchLists> {
  const location = summaryBatchesFile(snapshot.summary);
  if (location === undefined) return snapshot.summary;
  const snapshotId = snapshot['snapshot-id'].toString();
  const key = rollFileKey(ctx.sink.id, snapshotId);
  const missing = (why: string) =>
    new RollError(
      'sidecar_missing',
      `snapshot ${snapshotId} of sink ${ctx.sink.id} names its ${snapshot.summary[SUMMARY_KEYS.batchCount] ?? 'many'} batches in ${location}, which ${why}. ` +
        'Without it the batches that roll consumed cannot be told from new ones, so the sink does not roll: restore the file ' +
        `(it is ${ctx.intake.uri(key)}), or make sure no batch of that roll is left in the intake before removing the snapshot's claim.`,
    );
  if (location !== ctx.intake.uri(key)) throw missing(`is not where this sink keeps its roll files (${ctx.intake.uri(key)})`);
  checkpoint(ctx);
  let text: string;
  try {
    text = (await ctx.intake.getBytes(key)).bytes.toString('utf8');
  } catch (error) {
    if (isStoreError(error, 'not_found')) throw missing('is gone');
    throw toRollError(error, 'intake');
  }
  let lists: Record<string, unknown>;
  try {
    lists = JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw missing('is not JSON');
  }
  const strings = Object.fromEntries(Object.entries(lists ?? {}).filter((e): e is [string, string] => typeof e[1] === 'string'));
  if (strings[SUMMARY_KEYS.id] !== ctx.sink.id || strings[SIDECAR_SNAPSHOT_KEY] !== snapshotId) throw missing("belongs to another sink or snapshot");
  if (String(summaryBatchIds(strings).length) !== snapshot.summary[SUMMARY_KEYS.batchCount]) throw missing('does not hold as many batch ids as the summary counts');
  return strings;
}
