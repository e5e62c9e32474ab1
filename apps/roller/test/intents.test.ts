import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSink, createTable, send } from './support/api.ts';
import { expireLease, readBoth } from './support/expect.ts';
import { runCli, summaries } from './support/roller.ts';
import { startTestStack, suffix, type TestStack } from './support/stack.ts';

/** The operator command `intents`: a roll killed after its intent shows as open until the next roll settles it. */
let stack: TestStack;
const ns = `intents_${suffix()}`;

beforeAll(async () => {
  stack = await startTestStack();
  await createTable(stack, ns, 'events', [{ name: 'x', type: 'long', required: true }]);
});

afterAll(async () => {
  await stack?.dropNamespaces([ns]);
  await stack?.stop();
});

describe('roller intents <sink_id>', () => {
  it('lists the open intent of a roll killed before its commit, and the committed one once settled', async () => {
    const sink = await createSink(stack, `intents_${suffix()}`, `${ns}.events`);
    await send(stack, sink, 'first', [{ x: 1 }, { x: 2 }]);
    expect(summaries(await runCli(['intents', sink.id], stack.rollerEnv()))).toEqual([]);

    const crashed = await runCli(['roll', sink.id], stack.rollerEnv({ TABLEMERE_ROLLER_CRASH_AT: 'after-intent' }));
    expect(crashed.signal, crashed.stderr).toBe('SIGKILL');
    const open = await runCli(['intents', sink.id], stack.rollerEnv());
    expect(open.code, open.stderr).toBe(0);
    const [intent, ...more] = summaries(open);
    expect(more).toEqual([]);
    expect(intent).toMatchObject({ sink_id: sink.id, state: 'open', batch_ids: ['first'], snapshot_id: expect.any(String), closed_at: null });

    await expireLease(stack, sink.id);
    const roll = await runCli(['roll', sink.id], stack.rollerEnv());
    expect(roll.code, roll.stderr).toBe(0);
    expect((await readBoth(stack, ns, 'events')).map((r) => r.x)).toEqual([1, 2]);
    expect(summaries(await runCli(['intents', sink.id], stack.rollerEnv()))).toEqual([]);
    const closed = summaries(await runCli(['intents', sink.id, '--state', 'failed', '--limit', '5'], stack.rollerEnv()));
    const committed = summaries(await runCli(['intents', sink.id, '--state', 'committed'], stack.rollerEnv()));
    // Killed before its commit, the intent is settled as failed (abandoned) and its batch rolls again under a new one.
    expect(closed.map((r) => r.roll_id)).toEqual([intent!.roll_id]);
    expect(committed).toMatchObject([{ state: 'committed', batch_ids: ['first'], closed_at: expect.any(String) }]);
  });

  it('refuses a bad state, an unknown sink and a malformed id with exit 2 and one line', async () => {
    for (const [args, message] of [
      [['intents', 'snk_000000000000'], 'intents: no sink snk_000000000000\n'],
      [['intents', 'snk_000000000000', '--state', 'pending'], /^intents: --state is one of open, committed, empty, failed/],
      [['intents', 'nope'], /^intents: GET \/internal\/sinks\/nope\/rolls: 400 invalid_request: params\.id: /],
    ] as const) {
      const run = await runCli([...args], stack.rollerEnv());
      expect(run.code).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(message);
    }
  });
});
