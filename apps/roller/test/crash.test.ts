import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROLL_CRASH_POINTS } from '../src/crash.ts';
import { getSink } from './support/api.ts';
import { expireLease, intakeBatches, readBoth } from './support/expect.ts';
import { pyicebergRows } from './support/readers.ts';
import { runCli, summaries } from './support/roller.ts';
import type { TestStack } from './support/stack.ts';
import { startXSink, stopXSink, type XSink } from './support/x-sink.ts';
import { repoRoot } from '../../../tests/support/stack.ts';

/**
 * Crash safety: the operator command is SIGKILLed at every step of a roll (by the crash hook)
 * and at random moments (from outside), then run again; every row of every batch must be in
 * the table exactly once.
 */
let stack: TestStack;
let x: XSink;

beforeAll(async () => ({ stack, x } = await startXSink('crash')));
afterAll(async () => stopXSink(stack, x));

/** Sends `batches` batches of three rows, one of them rejected, with fresh x values. */
async function sendBatches(tag: string, batches: number): Promise<void> {
  for (let b = 0; b < batches; b++) await x.send(stack, `${tag}-${b}`, tag);
}

/** Every x sent is in the table exactly once, and nothing else is. */
async function expectExactlyOnce(rows: Array<Record<string, unknown>>): Promise<void> {
  const xs = rows.map((r) => Number(r.x)).sort((a, b) => a - b);
  expect(xs).toEqual([...x.sentX].sort((a, b) => a - b));
}

async function rollClean(): Promise<void> {
  const run = await runCli(['roll', x.sink.id], stack.rollerEnv());
  expect(run.code, run.stderr).toBe(0);
  expect(summaries(run)[0]).toMatchObject({ status: 'rolled' });
}

describe('crash safety', () => {
  for (const point of ROLL_CRASH_POINTS) {
    it(`a roll killed at ${point} loses and duplicates nothing`, async () => {
      await sendBatches(point, 3);
      const crashed = await runCli(['roll', x.sink.id], stack.rollerEnv({ TABLEMERE_ROLLER_CRASH_AT: point }));
      expect(crashed.signal, crashed.stderr).toBe('SIGKILL');
      await expireLease(stack, x.sink.id);
      await rollClean();
      await expectExactlyOnce(await pyicebergRows(x.ns, 'events'));
      expect(await intakeBatches(stack, x.sink.id)).toEqual([]);
      const view = await getSink(stack, x.sink.id);
      expect(view.lag.batches_waiting).toBe(0);
      // Reports made on recovery carry the counts too: one rejected row per batch, each counted once.
      expect(view.rejects).toMatchObject({ rows_total: x.batchesSent, batches_with_rejects: x.batchesSent });
    });
  }

  it('survives being killed at random moments, many times', async () => {
    // Each run is killed a random 0-150 ms after a randomly chosen step started (the roller
    // logs each step at debug level), so kills land inside steps and inside their requests.
    const steps = ['reload', 'list', 'invariant', 'first_roll', 'read_validate', 'rejects', 'write', 'intent', 'commit', 'delete', 'report', 'sweep'];
    const budgetMs = 150_000;
    const started = Date.now();
    const killedIn: Record<string, number> = {};
    let runs = 0;
    const cli = path.join(repoRoot, 'apps/roller/src/cli.ts');
    while (runs < 40 && Date.now() - started < budgetMs) {
      runs++;
      await sendBatches(`random${runs}`, 2);
      const target = steps[Math.floor(Math.random() * steps.length)]!;
      const child = spawn(process.execPath, ['--import', 'tsx', cli, 'roll', x.sink.id], { cwd: repoRoot, env: stack.rollerEnv({ LOG_LEVEL: 'debug' }), stdio: ['ignore', 'ignore', 'pipe'] });
      let buffered = '';
      child.stderr!.on('data', (chunk: Buffer) => {
        buffered += chunk.toString();
        if (buffered.includes(`"step":"${target}"`)) {
          buffered = '';
          setTimeout(() => child.kill('SIGKILL'), Math.random() * 150);
        }
        buffered = buffered.slice(-4096);
      });
      const signal = await new Promise<NodeJS.Signals | null>((resolve) => child.on('close', (_code, s) => resolve(s)));
      if (signal === 'SIGKILL') {
        killedIn[target] = (killedIn[target] ?? 0) + 1;
        await expireLease(stack, x.sink.id);
      }
    }
    await rollClean();
    await rollClean();
    const rows = await readBoth(stack, x.ns, 'events');
    await expectExactlyOnce(rows);
    expect(await intakeBatches(stack, x.sink.id)).toEqual([]);
    const view = await getSink(stack, x.sink.id);
    expect(view.lag.batches_waiting).toBe(0);
    expect(view.rejects).toMatchObject({ rows_total: x.batchesSent, batches_with_rejects: x.batchesSent });
    const kills = Object.values(killedIn).reduce((a, b) => a + b, 0);
    console.log(`[crash] ${kills} of ${runs} runs killed mid-roll (by step started: ${JSON.stringify(killedIn)}); ${x.sentX.length} rows, each exactly once`);
    expect(kills).toBeGreaterThan(runs / 2);
  }, 300_000);
});
