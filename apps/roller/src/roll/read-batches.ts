import { ROLL_MAX_BATCH_IDS } from '@tablemere/contracts';
import { BATCH_METADATA, batchIdOfKey, isStoreError } from '@tablemere/store';
import { toRollError } from '../errors.ts';
import { checkpoint, type RollContext } from './context.ts';
import { type Listed, selectBatches } from './policy.ts';

export interface IntakeObject extends Listed {
  batchId: string;
}

/** One pending batch as the intake stored it. */
export interface IntakeBatch {
  id: string;
  key: string;
  size: number;
  /** The intake's clock (x-amz-meta-received, RFC 3339): what `__ingest_ts` is set to. */
  received: string;
  body: Buffer;
}

/**
 * Reads in flight at once: the store answers small GETs faster side by side, up to a point
 * (3,000 GETs of 1 KB from the local SeaweedFS: 8 → 32 in flight, 1,078 → 1,633/s and 302 → 178
 * µs of CPU each; 64 gained nothing more: research/38).
 */
const READ_AHEAD = 32;
/** A received stamp as the intake writes it and a timestamptz column takes it: at most microseconds. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?(Z|[+-]\d{2}:\d{2})$/;

/**
 * Every pending batch of the sink in the intake, one level under its prefix (rejects live a
 * level deeper and are not listed). The store's listing is the truth about what is pending.
 */
export async function listIntake(ctx: RollContext): Promise<IntakeObject[]> {
  checkpoint(ctx);
  const objects: IntakeObject[] = [];
  try {
    for await (const page of ctx.intake.list(ctx.sink.intake.prefix, { delimiter: '/' })) {
      for (const o of page.objects) {
        const batchId = batchIdOfKey(ctx.sink.id, o.key);
        if (batchId !== undefined) objects.push({ batchId, key: o.key, size: o.size, lastModified: o.lastModified });
      }
    }
  } catch (error) {
    throw toRollError(error, 'intake');
  }
  return objects;
}

/**
 * The batches one roll takes from the pending ones: the oldest, up to roll_bytes (see
 * `selectBatches`). The 1,000 batches that make a sink due do not bound a roll: a backlog of
 * small batches rolls in one go (its ids in a sidecar, summary.ts), up to ROLL_MAX_BATCH_IDS.
 */
export function chooseBatches(ctx: RollContext, pending: readonly IntakeObject[]): IntakeObject[] {
  return selectBatches(pending, { maxBatches: ROLL_MAX_BATCH_IDS, maxBytes: ctx.sink.policy.roll_bytes });
}

/**
 * Step 4, read: the chosen batches, whole, in the order given, a few requests ahead of the
 * consumer so validating one batch overlaps reading the next. A batch deleted since the
 * listing (its sink was deleted with its pending batches) is skipped.
 */
export async function* readBatches(ctx: RollContext, chosen: readonly IntakeObject[]): AsyncGenerator<IntakeBatch> {
  const ahead: Array<Promise<IntakeBatch | undefined>> = [];
  let next = 0;
  const fill = () => {
    while (next < chosen.length && ahead.length < READ_AHEAD) {
      const read = readOne(ctx, chosen[next++]!);
      // Awaited in turn below; until then a failure must not count as unhandled.
      read.catch(() => undefined);
      ahead.push(read);
    }
  };
  fill();
  while (ahead.length > 0) {
    const batch = await ahead.shift()!;
    fill();
    if (batch !== undefined) yield batch;
  }
}
async function readOne(ctx: RollContext, object: IntakeObject): Promise<IntakeBatch | undefined> {
  checkpoint(ctx);
  try {
    const { head, body } = await ctx.intake.get(object.key);
    const chunks: Buffer[] = [];
    for await (const chunk of body) chunks.push(chunk as Buffer);
    const received = head.metadata[BATCH_METADATA.received];
    let stamp: string;
    if (received !== undefined && RFC3339.test(received)) {
      stamp = received;
    } else {
      // Without the intake's stamp the store's write time is the nearest truth (never our clock).
      stamp = (head.lastModified ?? object.lastModified ?? new Date(0)).toISOString();
      ctx.log.warn({ batch: object.batchId, received }, 'batch has no valid received metadata; __ingest_ts uses the store write time');
    }
    return { id: object.batchId, key: object.key, size: head.size, received: stamp, body: Buffer.concat(chunks) };
  } catch (error) {
    if (isStoreError(error, 'not_found')) return undefined;
    throw toRollError(error, 'intake');
  }
}
