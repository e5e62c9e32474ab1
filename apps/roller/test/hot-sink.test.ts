import { ROLL_MAX_BATCHES } from '@tablemere/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getSink } from './support/api.ts';
import { intakeBatches, readBoth } from './support/expect.ts';
import { logLines, startRoller, waitFor } from './support/roller.ts';
import type { TestStack } from './support/stack.ts';
import { startXSink, stopXSink, type XSink } from './support/x-sink.ts';

/**
 * A fleet's sink whose roll took its whole backlog: not due when that roll ends (fewer than
 * 1,000 batches pending, none old), it is due again as soon as the next 1,000 arrive, and the
 * roller takes it then, in the same run under the same lease, not at its next tick.
 */
const TICK_SECONDS = 60;
let stack: TestStack;
let x: XSink;

beforeAll(async () => ({ stack, x } = await startXSink('hot')));
afterAll(async () => stopXSink(stack, x));

/** Sends `count` batches, 25 at a time. */
async function sendBatches(tag: string, count: number): Promise<void> {
  for (let i = 0; i < count; i += 25) await Promise.all(Array.from({ length: Math.min(25, count - i) }, (_, j) => x.send(stack, `${tag}-${i + j}`, tag)));
}

type Line = Record<string, unknown> & { time: number };

describe('a sink that rolled a fleet’s worth', () => {
  it('rolls again once it is due again, well before the next tick', async () => {
    await sendBatches('first', ROLL_MAX_BATCHES);
    // Its first tick comes at once; the next would be a minute later.
    const roller = startRoller(stack.rollerEnv({ TABLEMERE_ROLLER_ID: 'hot', TABLEMERE_ROLLER_TICK_SECONDS: String(TICK_SECONDS), TABLEMERE_ROLLER_UPKEEP_SECONDS: '0' }));
    const committed = () => (logLines(roller.output()) as Line[]).filter((l) => l.outcome === 'committed');
    try {
      await waitFor('the first roll', async () => committed().length === 1, 60_000);
      expect(committed()[0]!.batches).toBe(ROLL_MAX_BATCHES);
      await sendBatches('second', ROLL_MAX_BATCHES);
      await waitFor('the second roll', async () => (await getSink(stack, x.sink.id)).lag.batches_waiting === 0, (TICK_SECONDS - 20) * 1000);
    } finally {
      roller.child.kill('SIGTERM');
    }
    expect((await roller.finished).code).toBe(0);
    const lines = logLines(roller.output()) as Line[];
    expect(committed().map((l) => l.batches)).toEqual([ROLL_MAX_BATCHES, ROLL_MAX_BATCHES]);
    // Both in one run: the second is the first's back-to-back roll, not a new tick's.
    expect(lines.filter((l) => l.back_to_back !== undefined)).toEqual([expect.objectContaining({ back_to_back: 1, due_reasons: ['max_batches'] })]);

    const rows = await readBoth(stack, x.ns, 'events');
    expect(rows.map((r) => Number(r.x))).toEqual([...x.sentX].sort((a, b) => a - b));
    expect(await intakeBatches(stack, x.sink.id)).toEqual([]);
  }, 180_000);
});
