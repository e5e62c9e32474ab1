/**
 * Roll benchmark, against the local stack (`npm start`), with an API of its own (fresh
 * database, both listeners) and the roller's operator command as its own process:
 *
 *  1. one full roll: ~64 MiB pending in 1,000 batches of one sink, sent over HTTP, rolled in
 *     one roll — seconds (the roll, lease to report), rows/s, peak RSS of the roller process
 *     (goals: ≤ 10 s, ≤ 512 MiB), and the roller's CPU for the roll: its process's CPU less that
 *     of the same command run first with nothing pending (start-up and the fixed steps);
 *  2. many sinks: N sinks (default 1,000), one small batch each, rolled once by one roller
 *     process (`roll --all-due`, TABLEMERE_ROLLER_CONCURRENCY) — rolls/s.
 *
 *   npm run bench:roll [-- --sinks 1000 --concurrency 4 --skip-full --skip-many]
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
  },
});

interface RollerRun {
  code: number | null;
  summaries: Array<Record<string, unknown>>;
  wallSeconds: number;
  maxRssMiB: number | undefined;
  /** CPU seconds of the whole process, start-up included. */
  cpuSeconds: number | undefined;
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
      if (code !== 0) process.stderr.write(stderr.slice(-4000));
      resolve({
        code,
        summaries: stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>),
        wallSeconds: (Date.now() - started) / 1000,
        maxRssMiB: usage ? Number(usage[1]) / 1024 : undefined,
        cpuSeconds: usage ? Number(usage[2]) / 1000 : undefined,
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

async function fullRoll(stack: TestStack): Promise<void> {
  const ns = `bench_roll_${suffix()}`;
  try {
    await createTable(stack, ns, 'readings', [...COLUMNS]);
    const sink = await createSink(stack, `bench_${suffix()}`, `${ns}.readings`);
    // The same command with nothing pending: what start-up and the roll's fixed steps cost.
    const idle = await runRoller(stack, ['roll', sink.id]);
    if (idle.code !== 0 || idle.cpuSeconds === undefined) throw new Error(`the roll of an empty sink failed: ${JSON.stringify(idle.summaries)}`);
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
    const cpu = (run.cpuSeconds ?? Number.NaN) - idle.cpuSeconds;
    console.log(
      `[full] roller CPU ${cpu.toFixed(2)} s for the roll = ${((cpu * 1000) / (bytes / MIB)).toFixed(1)} ms per MiB ` +
        `(process ${run.cpuSeconds?.toFixed(2)} s, less ${idle.cpuSeconds.toFixed(2)} s for a roll with nothing pending)`,
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

const stack = await startTestStack();
try {
  if (!args['skip-full']) await fullRoll(stack);
  if (!args['skip-many']) await manySinks(stack, Number(args.sinks), Number(args.concurrency));
} finally {
  await stack.stop();
}
console.log('\nFor STATE.md:');
for (const line of lines) console.log(`- ${line}`);
