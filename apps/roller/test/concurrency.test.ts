import { tmpdir } from 'node:os';
import path from 'node:path';
import type { CreatedSink } from '@tablemere/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getSink, send, sinkOnNewTable } from './support/api.ts';
import { intakeBatches, readBoth } from './support/expect.ts';
import { otherWriter } from './support/readers.ts';
import { logLines, runCli, startRoller, summaries, waitFor } from './support/roller.ts';
import { startTestStack, suffix, type TestStack } from './support/stack.ts';

let stack: TestStack;
const namespaces: string[] = [];

beforeAll(async () => {
  stack = await startTestStack();
});

afterAll(async () => {
  await stack?.dropNamespaces(namespaces);
  await stack?.stop();
});

const sinkOn = (policy: Record<string, number> = {}) => sinkOnNewTable(stack, namespaces, 'conc', policy);

function sender(sink: CreatedSink) {
  let x = 0;
  const sent: number[] = [];
  return {
    sent,
    async batch(id: string, rows = 5) {
      const body = Array.from({ length: rows }, () => ({ x: x++, who: 'sink' }));
      sent.push(...body.map((r) => r.x));
      await send(stack, sink, id, body);
    },
  };
}

const sinkXs = (rows: Array<Record<string, unknown>>) => rows.filter((r) => r.who === 'sink').map((r) => Number(r.x)).sort((a, b) => a - b);

describe('concurrency', () => {
  it('lands every batch once while another writer keeps committing to the table', async () => {
    const { ns, sink } = await sinkOn();
    const producer = sender(sink);
    await producer.batch('warm-up');
    expect((await runCli(['roll', sink.id], stack.rollerEnv())).code).toBe(0);

    // PyIceberg appending back to back, a short pause between commits.
    const writer = otherWriter(ns, 'events', path.join(tmpdir(), `stop-${suffix()}`), 0);
    const attempts: number[] = [];
    let conflicts = 0;
    // Batches sent and not yet committed: a roll takes all of them.
    let waiting = 0;
    const roll = async (): Promise<boolean> => {
      const run = await runCli(['roll', sink.id], stack.rollerEnv());
      const [summary] = summaries(run);
      if (summary?.status === 'failed') {
        expect(summary).toMatchObject({ reason: 'commit_conflict' });
        conflicts++;
        return false;
      }
      expect(run.code, run.stderr).toBe(0);
      expect(summary).toMatchObject({ outcome: 'committed', batches: waiting, rows: waiting * 5 });
      attempts.push(summary!.attempts as number);
      waiting = 0;
      return true;
    };
    try {
      for (let round = 0; round < 5; round++) {
        for (let b = 0; b < 3; b++) await producer.batch(`r${round}-b${b}`);
        waiting += 3;
        // A roll that lost every race ends as commit_conflict; the next one rolls the same
        // batches. A writer that never pauses can win every race for a while (optimistic
        // commits promise no turn): then the next round's roll takes both rounds' batches.
        for (let tries = 0; tries < 5 && !(await roll()); tries++);
      }
    } finally {
      const other = await writer.stop();
      console.log(
        `[concurrency] other writer: ${other.appends} appends in ${other.seconds} s; roll commit attempts: ${attempts.join(',')}; rolls that lost every race: ${conflicts}`,
      );
      expect(other.appends).toBeGreaterThan(0);
    }
    // Most rolls commit against the other writer; what is left lands once it has stopped.
    expect(attempts.length).toBeGreaterThan(0);
    if (waiting > 0) expect(await roll()).toBe(true);
    const rows = await readBoth(stack, ns, 'events');
    expect(sinkXs(rows)).toEqual(producer.sent);
    expect(rows.filter((r) => r.who === 'other writer').length).toBeGreaterThan(0);
    expect(await intakeBatches(stack, sink.id)).toEqual([]);
    expect((await getSink(stack, sink.id)).lag.batches_waiting).toBe(0);
  }, 300_000);

  it('two roller services on one stack never commit a batch twice', async () => {
    const { ns, sink } = await sinkOn({ inactivity_seconds: 10 });
    const producer = sender(sink);
    const env = (id: string) => stack.rollerEnv({ TABLEMERE_ROLLER_ID: id, TABLEMERE_ROLLER_TICK_SECONDS: '1', TABLEMERE_ROLLER_SURVEY_SECONDS: '5' });
    const rollers = [startRoller(env('roller-a')), startRoller(env('roller-b'))];
    try {
      for (let burst = 0; burst < 3; burst++) {
        for (let b = 0; b < 4; b++) await producer.batch(`burst${burst}-${b}`);
        await waitFor('the burst to roll', async () => (await getSink(stack, sink.id)).lag.batches_waiting === 0, 60_000);
      }
      // Both at once on the operator path too: one rolls, the other finds the lease held or nothing left.
      for (let b = 0; b < 4; b++) await producer.batch(`cli-${b}`);
      const runs = await Promise.all([runCli(['roll', sink.id], stack.rollerEnv()), runCli(['roll', sink.id], stack.rollerEnv())]);
      for (const run of runs) expect([0, 3]).toContain(run.code);
      await waitFor('everything to roll', async () => (await getSink(stack, sink.id)).lag.batches_waiting === 0, 60_000);
    } finally {
      for (const r of rollers) r.child.kill('SIGTERM');
    }
    const finished = await Promise.all(rollers.map((r) => r.finished));
    for (const f of finished) expect(f.code).toBe(0);
    const committed = finished.map((f) => logLines(f.stdout).filter((l) => l.outcome === 'committed').length);
    console.log(`[concurrency] committed rolls per roller service: ${committed.join(', ')}`);
    const rows = await readBoth(stack, ns, 'events');
    expect(sinkXs(rows)).toEqual(producer.sent);
    expect(await intakeBatches(stack, sink.id)).toEqual([]);
  }, 240_000);
});
