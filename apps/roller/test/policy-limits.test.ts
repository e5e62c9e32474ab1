import { ROLL_BYTES_MIN, ROLL_MAX_BATCHES, SEND_BODY_LIMIT } from '@tablemere/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InternalApi } from '../src/internal-api.ts';
import { createSink, createTable, getSink, send } from './support/api.ts';
import { intakeBatches, readBoth } from './support/expect.ts';
import { runCli, summaries } from './support/roller.ts';
import { startTestStack, suffix, type TestStack } from './support/stack.ts';

/**
 * The roll policy's count and size rules through real rolls: a sink becomes due exactly when
 * its pending batches reach 1,000 or their bytes reach roll_bytes (and not one batch or byte
 * before, roll_seconds being an hour away), and `roll --all-due` then takes the oldest batches
 * up to about roll_bytes, leaving the rest for the next roll: 1,000 batches only make a sink
 * due, and a roll of more of them names its ids in a sidecar file.
 */
let stack: TestStack;
let internal: InternalApi;
const namespaces: string[] = [];

beforeAll(async () => {
  stack = await startTestStack();
  internal = new InternalApi({ url: stack.internalUrl, secret: stack.bootstrapSecret });
});

afterAll(async () => {
  await stack?.dropNamespaces(namespaces);
  await stack?.stop();
});

async function quietSink(name: string) {
  const ns = `limits_${suffix()}`;
  namespaces.push(ns);
  await createTable(stack, ns, 'events', [
    { name: 'x', type: 'long', required: true },
    { name: 'who', type: 'string' },
  ]);
  // Only the count or the size can make it due: the oldest batch would wait an hour.
  return { ns, sink: await createSink(stack, `${name}_${suffix()}`, `${ns}.events`, { roll_seconds: 3600, roll_bytes: ROLL_BYTES_MIN }) };
}

/** Why the API's due view says the sink is due; [] when it is not. */
async function dueReasons(sinkId: string): Promise<string[]> {
  const { sinks } = await internal.listSinks({ due: true });
  return sinks.find((s) => s.id === sinkId)?.due_reasons ?? [];
}

async function rollAllDue() {
  const run = await runCli(['roll', '--all-due'], stack.rollerEnv());
  if (run.code !== 0) throw new Error(`roll --all-due exited ${run.code}: ${run.stderr}`);
  return summaries(run);
}

describe('the roll policy at its limits', () => {
  it('is due at exactly 1,000 pending batches, and a roll takes all 1,001', async () => {
    const { ns, sink } = await quietSink('count');
    const id = (i: number) => `b-${String(i).padStart(4, '0')}`;
    // 999 batches, a few at a time.
    for (let i = 0; i < ROLL_MAX_BATCHES - 1; i += 25) {
      await Promise.all(Array.from({ length: Math.min(25, ROLL_MAX_BATCHES - 1 - i) }, (_, k) => send(stack, sink, id(i + k), [{ x: i + k }])));
    }
    expect(await dueReasons(sink.id)).toEqual([]);
    await send(stack, sink, id(999), [{ x: 999 }]);
    expect(await dueReasons(sink.id)).toEqual(['max_batches']);
    await send(stack, sink, id(1000), [{ x: 1000 }]);

    const [summary] = await rollAllDue();
    expect(summary).toMatchObject({ sink: sink.id, status: 'rolled', outcome: 'committed', batches: ROLL_MAX_BATCHES + 1, rows: ROLL_MAX_BATCHES + 1 });
    const rows = await readBoth(stack, ns, 'events');
    expect(rows.map((r) => r.x)).toEqual(Array.from({ length: ROLL_MAX_BATCHES + 1 }, (_, i) => i));
    expect(await intakeBatches(stack, sink.id)).toEqual([]);
    expect((await getSink(stack, sink.id)).lag.batches_waiting).toBe(0);
    expect(await dueReasons(sink.id)).toEqual([]);
  }, 300_000);

  it('is due once the pending bytes reach roll_bytes, and a roll takes about roll_bytes', async () => {
    const { ns, sink } = await quietSink('size');
    // Batches of about 8.5 MiB: three stay under 32 MiB, the fourth passes it.
    const row = (x: number) => `{"x":${x},"who":"${'w'.repeat(8000)}"}`;
    const perBatch = Math.floor((8.5 * 1024 * 1024) / (row(0).length + 1));
    let next = 0;
    const batch = () => `[${Array.from({ length: perBatch }, () => row(next++)).join(',')}]`;
    for (let i = 1; i <= 3; i++) await send(stack, sink, `s-${i}`, batch());
    const waiting = (await getSink(stack, sink.id)).lag.bytes_waiting;
    expect(waiting).toBeLessThan(ROLL_BYTES_MIN);
    expect(await dueReasons(sink.id)).toEqual([]);
    const fourth = batch();
    expect(fourth.length).toBeLessThan(SEND_BODY_LIMIT);
    await send(stack, sink, 's-4', fourth);
    expect((await getSink(stack, sink.id)).lag.bytes_waiting).toBeGreaterThanOrEqual(ROLL_BYTES_MIN);
    expect(await dueReasons(sink.id)).toEqual(['roll_bytes']);

    // Three batches fit within roll_bytes; the fourth would pass it and waits.
    const [summary] = await rollAllDue();
    expect(summary).toMatchObject({ sink: sink.id, status: 'rolled', outcome: 'committed', batches: 3, rows: 3 * perBatch });
    expect((await readBoth(stack, ns, 'events')).length).toBe(3 * perBatch);
    expect(await intakeBatches(stack, sink.id)).toEqual(['s-4']);
    expect(await dueReasons(sink.id)).toEqual([]);
  }, 300_000);
});
