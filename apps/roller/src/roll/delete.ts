import { RollError } from '../errors.ts';
import type { RollContext } from './context.ts';

/**
 * Step 9, delete: the consumed batches leave the intake (DeleteObjects, 1,000 keys a call).
 * Any key the store refuses ends the roll before its report: the ledger keeps the batches
 * pending, lag grows, and the next roll finds them named by the committed snapshot and tries
 * the delete again; nothing is appended twice. Runs even when the lease was lost meanwhile:
 * deleting batches that are committed is always right.
 */
export async function deleteBatches(ctx: RollContext, keys: readonly string[]): Promise<void> {
  if (keys.length === 0) return;
  const { crash } = ctx.deps;
  // With the crash hook armed mid-delete, delete in two halves so there is a middle to die in.
  const half = Math.ceil(keys.length / 2);
  const parts = crash.armed('mid-delete') && keys.length > 1 ? [keys.slice(0, half), keys.slice(half)] : [keys];
  for (const [i, part] of parts.entries()) {
    let failed: Array<{ key: string; code: string | undefined }>;
    try {
      ({ failed } = await ctx.intake.deleteMany(part));
    } catch (error) {
      throw new RollError('delete_failed', `deleting ${part.length} consumed batches failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
    if (failed.length > 0) {
      const first = failed[0]!;
      throw new RollError('delete_failed', `the store refused to delete ${failed.length} of ${part.length} consumed batches (first: ${first.key}, ${first.code ?? 'no code'})`);
    }
    if (i === 0 && parts.length > 1) crash.reached('mid-delete');
  }
}
