/**
 * Roll benchmark, against the local stack (`npm start`), with an API of its own (fresh
 * database, both listeners) and the roller's operator command as its own process:
 *
 *  1. one full roll: ~64 MiB pending in 1,000 batches of one sink, sent over HTTP, rolled in
 *     one roll — seconds (the roll, lease to report), rows/s, peak RSS of the roller process
 *     (goals: ≤ 10 s, ≤ 512 MiB), and the roller's CPU for the roll: its process's CPU less that
 *     of the same command run first with nothing pending (start-up and the fixed steps);
 *  2. many sinks: N sinks (default 1,000), one small batch each, rolled once by one roller
 *     process (`roll --all-due`, TABLEMERE_ROLLER_CONCURRENCY) — rolls/s;
 *  3. with `--small N`: one roll of N ~1 KB batches (a fleet's sends; above 1,000 their ids go
 *     to a sidecar; N up to the sink backlog cap, 10,000 by default) — the roller's CPU per
 *     batch, and per step (its CPU sampled every 10 ms, cut at the step lines it logs at debug
 *     level).
 *
 *   npm run bench:roll [-- --sinks 1000 --concurrency 4 --skip-full --skip-many --small 8000]
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { CreatedSink } from '@tablemere/contracts';
import { createSink, createTable, send } from '../../apps/roller/test/support/api.ts';
import { startTestStack, suffix, type TestStack } from '../../apps/roller/test/support/stack.ts';
import { repoRoot } from '../../tests/support/stack.ts';
import { batchBody, COLUMNS } from './sensor-rows.ts';

const MIB = 1024 * 1024;
const { values: args } = parseArgs({
  options: {
    sinks: { type: 'string', default: '1000' },
    concurrency: { type: 'string', default: '4' },
    'skip-full': { type: 'boolean', default: false },
    'skip-many': { type: 'boolean', default: false },
    small: { type: 'string' },
  },
});

interface RollerRun {
  code: number | null;
  summaries: Array<Record<string, unknown>>;
  wallSeconds: number;
  maxRssMiB: number | undefined;
  /** CPU seconds of the whole process, start-up included. */
  cpuSeconds: number | undefined;
  /** With BENCH_CPU_SAMPLE_MS: [wall ms, process CPU ms] every that many ms. */
  cpuSamples: Array<[number, number]>;
  /** Its log lines (stderr), parsed. */
  logs: Array<Record<string, unknown>>;
}

/** The operator command as its own process, with its peak RSS and CPU time reported at exit. */
function runRoller(stack: TestStack, args: string[], env: Record<string, string> = {}): Promise<RollerRun> {
  const started = Date.now();
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '--import', path.join(repoRoot, 'scripts/bench/roll-usage.mjs'), path.join(repoRoot, 'apps/roller/src/cli.ts'), ...args],
    { cwd: repoRoot, env: stack.rollerEnv({ LOG_LEVEL: 'warn', ...env }), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      const usage = /\{"bench_max_rss_kib":(\d+),"bench_cpu_ms":(\d+)\}/.exec(stderr);
      const logs = stderr
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      if (code !== 0) process.stderr.write(stderr.slice(-4000));
      resolve({
        code,
        summaries: stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>),
        wallSeconds: (Date.now() - started) / 1000,
        maxRssMiB: usage ? Number(usage[1]) / 1024 : undefined,
        cpuSeconds: usage ? Number(usage[2]) / 1000 : undefined,
        cpuSamples: (logs.find((l) => 'bench_cpu_samples' in l)?.bench_cpu_samples as Array<[number, number]> | undefined) ?? [],
        logs,
      });
    });
  });
}

async function inParallel<T>(items: readonly T[], width: number, run: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        await run(items[i]!, i);
      }
    }),
  );
}

async function dropNamespace(stack: TestStack, ns: string): Promise<void> {
  const tables = await stack.catalog.listTables(ns).catch(() => []);
  await inParallel(tables, 8, async (t) => stack.catalog.dropTable({ namespace: ns, name: t.name }, { purge: true }).catch(() => undefined));
  await stack.catalog.dropNamespace(ns).catch(() => undefined);
}

const lines: string[] = [];
const today = new Date().toISOString().slice(0, 10);

/**
 * A sensor table in `ns` and its sink, and the CPU seconds of the roll command run with
 * nothing pending (start-up and the roll's fixed steps), to take off a measured roll's.
 */
async function benchSink(stack: TestStack, ns: string): Promise<{ sink: CreatedSink; idleCpuSeconds: number }> {
  await createTable(stack, ns, 'readings', [...COLUMNS]);
  const sink = await createSink(stack, `bench_${suffix()}`, `${ns}.readings`);
  const idle = await runRoller(stack, ['roll', sink.id]);
  if (idle.code !== 0 || idle.cpuSeconds === undefined) throw new Error(`the roll of an empty sink failed: ${JSON.stringify(idle.summaries)}`);
  return { sink, idleCpuSeconds: idle.cpuSeconds };
}

async function fullRoll(stack: TestStack): Promise<void> {
  const ns = `bench_roll_${suffix()}`;
  try {
    const { sink, idleCpuSeconds } = await benchSink(stack, ns);
    const batchBytes = Math.floor((64 * MIB) / 1000) - 64;
    let seq = 0;
    let bytes = 0;
    const sendStarted = Date.now();
    const ids = Array.from({ length: 1000 }, (_, i) => `batch-${String(i).padStart(4, '0')}`);
    const bodies = ids.map(() => {
      const b = batchBody(seq, batchBytes);
      seq += b.rows;
      return b.body;
    });
    await inParallel(ids, 16, async (id, i) => {
      const result = await send(stack, sink, id, bodies[i]!);
      bytes += result.bytes;
    });
    console.log(`[full] sent ${ids.length} batches, ${(bytes / MIB).toFixed(1)} MiB of NDJSON, ${seq} rows, in ${((Date.now() - sendStarted) / 1000).toFixed(1)} s`);

    const run = await runRoller(stack, ['roll', sink.id]);
    const summary = run.summaries[0];
    if (run.code !== 0 || summary?.outcome !== 'committed') throw new Error(`the roll did not commit: ${JSON.stringify(summary)}`);
    const seconds = summary.seconds as number;
    const rows = summary.rows as number;
    console.log(`[full] ${JSON.stringify(summary)}`);
    const cpu = (run.cpuSeconds ?? Number.NaN) - idleCpuSeconds;
    console.log(
      `[full] roller CPU ${cpu.toFixed(2)} s for the roll = ${((cpu * 1000) / (bytes / MIB)).toFixed(1)} ms per MiB ` +
        `(process ${run.cpuSeconds?.toFixed(2)} s, less ${idleCpuSeconds.toFixed(2)} s for a roll with nothing pending)`,
    );
    lines.push(
      `${today} bench:roll full roll: ${summary.batches} batches, ${(bytes / MIB).toFixed(1)} MiB NDJSON, ${rows} rows in ${seconds.toFixed(2)} s ` +
        `(${Math.round(rows / seconds)} rows/s, ${(bytes / MIB / seconds).toFixed(1)} MiB/s); roller peak RSS ${run.maxRssMiB?.toFixed(0)} MiB; ` +
        `roller CPU ${cpu.toFixed(2)} s (${((cpu * 1000) / (bytes / MIB)).toFixed(1)} ms per MiB, start-up left out); ` +
        `process wall ${run.wallSeconds.toFixed(1)} s (goals ≤ 10 s, ≤ 512 MiB)`,
    );
  } finally {
    await dropNamespace(stack, ns);
  }
}

async function manySinks(stack: TestStack, count: number, concurrency: number): Promise<void> {
  const ns = `bench_sinks_${suffix()}`;
  try {
    const setupStarted = Date.now();
    const sinks: CreatedSink[] = new Array(count);
    await inParallel(Array.from({ length: count }, (_, i) => i), 8, async (i) => {
      const name = `t${String(i).padStart(5, '0')}`;
      await createTable(stack, ns, name, [...COLUMNS]);
      sinks[i] = await createSink(stack, `s_${name}_${suffix()}`, `${ns}.${name}`, { inactivity_seconds: 10 });
      await send(stack, sinks[i]!, 'only', batchBody(i * 10, 1200).body);
    });
    console.log(`[many] ${count} tables, sinks and batches set up in ${((Date.now() - setupStarted) / 1000).toFixed(1)} s; waiting for the inactivity rule (10 s)`);
    await new Promise((r) => setTimeout(r, 11_000));

    const run = await runRoller(stack, ['roll', '--all-due'], { TABLEMERE_ROLLER_CONCURRENCY: String(concurrency) });
    const committed = run.summaries.filter((s) => s.outcome === 'committed').length;
    const failed = run.summaries.filter((s) => s.status === 'failed');
    if (failed.length > 0) console.log(`[many] failures: ${JSON.stringify(failed.slice(0, 5))}`);
    const rollSeconds = run.summaries.reduce((sum, s) => sum + (s.seconds as number), 0) / Math.max(1, run.summaries.length);
    console.log(`[many] ${committed}/${count} committed in ${run.wallSeconds.toFixed(1)} s; mean roll ${rollSeconds.toFixed(2)} s; peak RSS ${run.maxRssMiB?.toFixed(0)} MiB`);
    lines.push(
      `${today} bench:roll many sinks: ${committed} of ${count} sinks (one ~1 KB batch each, first roll included) rolled by one roller process ` +
        `at concurrency ${concurrency} in ${run.wallSeconds.toFixed(1)} s = ${(committed / run.wallSeconds).toFixed(1)} rolls/s ` +
        `(mean roll ${rollSeconds.toFixed(2)} s); peak RSS ${run.maxRssMiB?.toFixed(0)} MiB`,
    );
  } finally {
    await dropNamespace(stack, ns);
  }
}

/** The process's CPU at `at` (ms), from its samples, interpolated. */
function cpuAt(samples: ReadonlyArray<[number, number]>, at: number): number {
  const after = samples.findIndex(([t]) => t >= at);
  if (after <= 0) return after === 0 ? samples[0]![1] : samples.at(-1)![1];
  const [t0, c0] = samples[after - 1]!;
  const [t1, c1] = samples[after]!;
  return c0 + ((c1 - c0) * (at - t0)) / Math.max(1, t1 - t0);
}

/** CPU ms of each step of the run's roll: from the step's line to the next step's (or the roll's end). */
function cpuBySteps(run: RollerRun): Record<string, number> {
  const marks = run.logs.filter((l) => typeof l.step === 'string').map((l) => ({ step: l.step as string, at: l.time as number }));
  const end = (run.logs.find((l) => typeof l.phases_ms === 'object')?.time as number | undefined) ?? run.cpuSamples.at(-1)?.[0] ?? 0;
  const steps: Record<string, number> = {};
  for (const [i, mark] of marks.entries()) {
    const until = marks[i + 1]?.at ?? end;
    steps[mark.step] = Math.round((steps[mark.step] ?? 0) + cpuAt(run.cpuSamples, until) - cpuAt(run.cpuSamples, mark.at));
  }
  return steps;
}

async function smallBatches(stack: TestStack, count: number): Promise<void> {
  const ns = `bench_small_${suffix()}`;
  try {
    const { sink, idleCpuSeconds } = await benchSink(stack, ns);
    let seq = 0;
    let bytes = 0;
    const sendStarted = Date.now();
    const ids = Array.from({ length: count }, (_, i) => `small-${String(i).padStart(6, '0')}`);
    const bodies = ids.map(() => {
      const b = batchBody(seq, 1000);
      seq += b.rows;
      return b.body;
    });
    await inParallel(ids, 16, async (id, i) => {
      await send(stack, sink, id, bodies[i]!);
      bytes += Buffer.byteLength(bodies[i]!);
    });
    console.log(`[small] sent ${count} batches of ~${Math.round(bytes / count)} bytes, ${seq} rows, in ${((Date.now() - sendStarted) / 1000).toFixed(1)} s`);

    const run = await runRoller(stack, ['roll', sink.id], { LOG_LEVEL: 'debug', BENCH_CPU_SAMPLE_MS: '10' });
    const summary = run.summaries[0];
    if (run.code !== 0 || summary?.outcome !== 'committed' || summary.batches !== count) throw new Error(`the roll did not commit every batch: ${JSON.stringify(summary)}`);
    const cpu = (run.cpuSeconds ?? Number.NaN) - idleCpuSeconds;
    const steps = cpuBySteps(run);
    const perBatch = (ms: number) => `${((ms * 1000) / count).toFixed(0)} µs`;
    console.log(`[small] ${JSON.stringify(summary)}`);
    console.log(`[small] roller CPU ${cpu.toFixed(2)} s for the roll = ${perBatch(cpu * 1000)} per batch (process ${run.cpuSeconds?.toFixed(2)} s, less ${idleCpuSeconds.toFixed(2)} s with nothing pending)`);
    console.log(`[small] CPU per step, ms (per batch): ${Object.entries(steps).map(([step, ms]) => `${step} ${ms} (${perBatch(ms)})`).join(', ')}`);
    lines.push(
      `${today} bench:roll small batches: ${count} batches of ~${Math.round(bytes / count)} B (${seq} rows) in one roll of ${(summary.seconds as number).toFixed(2)} s; ` +
        `roller CPU ${cpu.toFixed(2)} s = ${perBatch(cpu * 1000)} per batch (start-up left out); by step: ${Object.entries(steps)
          .filter(([, ms]) => ms >= 5)
          .map(([step, ms]) => `${step} ${perBatch(ms)}`)
          .join(', ')}; peak RSS ${run.maxRssMiB?.toFixed(0)} MiB`,
    );
  } finally {
    await dropNamespace(stack, ns);
  }
}

const stack = await startTestStack();
try {
  if (!args['skip-full']) await fullRoll(stack);
  if (!args['skip-many']) await manySinks(stack, Number(args.sinks), Number(args.concurrency));
  if (args.small !== undefined) await smallBatches(stack, Number(args.small));
} finally {
  await stack.stop();
}
console.log('\nFor STATE.md:');
for (const line of lines) console.log(`- ${line}`);
