import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSink, createTable, getSink, send } from './support/api.ts';
import { intakeBatches, readBoth } from './support/expect.ts';
import { startPrivateStore, type PrivateStore } from './support/private-store.ts';
import { logLines, runCli, summaries } from './support/roller.ts';
import { startTestStack, suffix, type TestStack } from './support/stack.ts';

/**
 * A store that refuses the delete: the roller reads the intake with an identity that may read
 * and list but not delete (a store of this test's own, so the shared stack's identities are
 * untouched). The commit lands, the delete fails, the roll ends before its report, lag grows;
 * with delete rights back, the next roll deletes and reports without appending again.
 */
let store: PrivateStore;
let stack: TestStack;

beforeAll(async () => {
  store = await startPrivateStore();
  stack = await startTestStack({ env: store.env });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await store?.stop();
});

describe('a delete the store refuses', () => {
  it('ends the roll, lag grows, and nothing is appended twice', async () => {
    const ns = `del_${suffix()}`;
    await createTable(stack, ns, 'events', [{ name: 'x', type: 'long', required: true }]);
    const sink = await createSink(stack, `del_${suffix()}`, `${ns}.events`);
    await send(stack, sink, 'one', [{ x: 1 }, { x: 2 }]);
    await send(stack, sink, 'two', [{ x: 3 }]);

    const readOnly = stack.rollerEnv({ AWS_ACCESS_KEY_ID: store.reader.accessKeyId, AWS_SECRET_ACCESS_KEY: store.reader.secretAccessKey });
    const failed = await runCli(['roll', sink.id], readOnly);
    expect(failed.code).toBe(1);
    expect(summaries(failed)[0]).toMatchObject({ status: 'failed', reason: 'delete_failed' });
    expect(logLines(failed.stderr).some((l) => l.reason === 'delete_failed')).toBe(true);
    expect((await readBoth(stack, ns, 'events')).map((r) => r.x)).toEqual([1, 2, 3]);
    expect(await intakeBatches(stack, sink.id)).toHaveLength(2);
    let view = await getSink(stack, sink.id);
    expect(view.lag.batches_waiting).toBe(2);
    expect(view.last_roll).toBeNull();

    // More arrives; still no delete rights: the committed batches block any new commit.
    await send(stack, sink, 'three', [{ x: 4 }]);
    const again = await runCli(['roll', sink.id], readOnly);
    expect(summaries(again)[0]).toMatchObject({ status: 'failed', reason: 'delete_failed' });
    expect((await readBoth(stack, ns, 'events')).map((r) => r.x)).toEqual([1, 2, 3]);
    view = await getSink(stack, sink.id);
    expect(view.lag.batches_waiting).toBe(3);

    // Delete rights back: the committed batches are deleted and reported, the new one rolls.
    const ok = await runCli(['roll', sink.id], stack.rollerEnv());
    expect(ok.code, ok.stderr).toBe(0);
    expect(summaries(ok)[0]).toMatchObject({ status: 'rolled', outcome: 'committed', settled: 1, batches: 1, rows: 1 });
    expect((await readBoth(stack, ns, 'events')).map((r) => r.x)).toEqual([1, 2, 3, 4]);
    expect(await intakeBatches(stack, sink.id)).toEqual([]);
    view = await getSink(stack, sink.id);
    expect(view.lag.batches_waiting).toBe(0);
    expect(view.last_roll).toMatchObject({ batches: 1, rows: 1 });
  }, 120_000);
});
