import { ROLL_MAX_BATCHES } from '@tablemere/contracts';
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

const READ_CONCURRENCY = 16;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

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
 * Step 4, read: the oldest pending batches, at most 1,000 and about roll_bytes, read whole.
 * A batch deleted since the listing (a sink deleted with its pending batches) is skipped.
 */
export async function readBatches(ctx: RollContext, listed: readonly IntakeObject[]): Promise<IntakeBatch[]> {
  checkpoint(ctx);
  const chosen = selectBatches(listed, { maxBatches: ROLL_MAX_BATCHES, maxBytes: ctx.sink.policy.roll_bytes });
  const batches: Array<IntakeBatch | undefined> = new Array(chosen.length);
  let next = 0;
  const worker = async () => {
    while (next < chosen.length) {
      const i = next++;
      batches[i] = await readOne(ctx, chosen[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(READ_CONCURRENCY, chosen.length) }, worker));
  return batches.filter((b): b is IntakeBatch => b !== undefined);
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
