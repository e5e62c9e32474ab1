/**
 * Slow clients against the API (issue 13): 200 connections that send headers or bodies
 * slowly, 50 of them declaring 16 MiB bodies on the send route and stalling after 8 MiB,
 * while producers keep sending small batches to another sink. The API runs as its own
 * process over the local stack (its own database), with the timeouts and caps given here.
 *
 * Prints: every slow connection closed by the server within the configured timeouts (count,
 * and the time each took, per kind), the normal sends' p50/p99 meanwhile (goal p99 < 100 ms),
 * and the API's RSS before, at its peak during, and a minute after (goal: back within 25% of
 * its start).
 *
 *   npm run bench:slow-clients [-- --after 60 --headers-ms 10000 --request-ms 60000 --idle-ms 30000]
 */
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { CreatedSink } from '@tablemere/contracts';
import { createDatabase, dropDatabase, migrate } from '@tablemere/db';
import { bootstrap } from '../../apps/api/src/bootstrap.ts';
import { DEFAULT_IN_FLIGHT_LIMITS } from '../../apps/api/src/domain/intake/in-flight.ts';
import { DEFAULT_SERVER_TIMEOUTS } from '../../apps/api/src/http/server-limits.ts';
import { dropNamespaces, stackCatalog, stackEnv, stackWarehouse } from '../../tests/support/stack.ts';
import { api, cpuMsOf, rssBytes, startBenchApi } from './api-process.ts';

const MIB = 1024 * 1024;
const { values: args } = parseArgs({
  options: {
    /** Seconds to wait after the last slow connection closed before the last RSS reading. */
    after: { type: 'string', default: '60' },
    'headers-ms': { type: 'string', default: String(DEFAULT_SERVER_TIMEOUTS.headersMs) },
    'request-ms': { type: 'string', default: String(DEFAULT_SERVER_TIMEOUTS.requestMs) },
    'idle-ms': { type: 'string', default: String(DEFAULT_SERVER_TIMEOUTS.idleMs) },
    /** Producers sending small batches meanwhile. */
    producers: { type: 'string', default: '4' },
    /** Seconds the producers send alone first, for comparison. */
    'baseline-seconds': { type: 'string', default: '20' },
  },
});
const timeouts = { headers: Number(args['headers-ms']), request: Number(args['request-ms']), idle: Number(args['idle-ms']) };
/** Node checks the headers and request deadlines once a second: a close may come that much late. */
const CHECK_SLACK_MS = 1_500;

const env = stackEnv();
const run = randomBytes(4).toString('hex');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Kind = 'slow headers' | 'slow JSON body (control route)' | 'slow send body' | '16 MiB send, stalls at 8 MiB';

interface SlowResult {
  kind: Kind;
  /**
   * Milliseconds until the server closed the connection, from connecting (from the last byte
   * written, for a send that stalls: the idle timeout counts from there); undefined when it never did.
   */
  closedAfterMs: number | undefined;
  /** The status line the server answered with, if any. */
  status: string | undefined;
  /** The longest the server may take for this kind. */
  limitMs: number;
}

/**
 * One slow client: connects, writes `head`, then `drip` one byte every `dripMs` until the
 * server closes (`stallAfter` bytes of body sent at once instead, then nothing).
 */
function slowClient(port: number, kind: Kind, head: string, body: { drip?: string; dripMs?: number; bulk?: Buffer }, limitMs: number, giveUpMs: number): Promise<SlowResult> {
  return new Promise((resolve) => {
    let started = Date.now();
    const socket = net.connect(port, '127.0.0.1');
    let status: string | undefined;
    let timer: NodeJS.Timeout | undefined;
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearInterval(timer);
      clearTimeout(giveUp);
      socket.destroy();
      resolve({ kind, closedAfterMs: closed ? Date.now() - started : undefined, status, limitMs });
    };
    const giveUp = setTimeout(() => finish(false), giveUpMs);
    socket.on('data', (chunk: Buffer) => {
      status ??= chunk.toString('latin1').split('\r\n')[0];
    });
    socket.on('end', () => finish(true));
    socket.on('close', () => finish(true));
    socket.on('error', () => finish(true));
    socket.on('connect', () => {
      socket.write(head);
      if (body.bulk) {
        socket.write(body.bulk, () => {
          started = Date.now();
        });
      }
      if (body.drip !== undefined) {
        let i = 0;
        timer = setInterval(() => {
          if (!socket.destroyed) socket.write(body.drip![i++ % body.drip!.length]!);
        }, body.dripMs ?? 1_000);
      }
    });
  });
}

/** The API's own view of its memory (heap total and used, external: Buffers and slabs), from /metrics, in MiB. */
async function heapOf(url: string): Promise<string> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const metric = (name: string) => Number(new RegExp(`^${name} (\\S+)`, 'm').exec(text)?.[1] ?? NaN) / MIB;
  return `heap ${metric('nodejs_heap_size_total_bytes').toFixed(0)} MiB (used ${metric('nodejs_heap_size_used_bytes').toFixed(0)}), external ${metric('nodejs_external_memory_bytes').toFixed(0)} MiB`;
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

async function main(): Promise<void> {
  const dbUrl = new URL(env.DATABASE_URL!);
  dbUrl.pathname = `/bench_slow_${run}`;
  const databaseUrl = dbUrl.toString();
  const secretKey = randomBytes(32).toString('base64');
  await createDatabase(databaseUrl);
  await migrate(databaseUrl);
  const boot = await bootstrap(databaseUrl, { secretKey, warehouse: stackWarehouse(env) });
  const adminKey = boot.adminKey!;
  const server = await startBenchApi(`slow-clients-${run}`, databaseUrl, secretKey, {
    env: {
      TABLEMERE_HEADERS_TIMEOUT_MS: String(timeouts.headers),
      TABLEMERE_REQUEST_TIMEOUT_MS: String(timeouts.request),
      TABLEMERE_IDLE_TIMEOUT_MS: String(timeouts.idle),
    },
  });
  const pid = server.child.pid!;
  const port = Number(new URL(server.url).port);
  const namespace = `bench_slow_${run}`;
  let sampler: NodeJS.Timeout | undefined;
  try {
    await api(server.url, 'POST', '/v1/warehouses/garden/tables', adminKey, {
      namespace,
      name: 'events',
      columns: [{ name: 'seq', type: 'long', required: true }, { name: 'device', type: 'string' }],
    });
    const sink = async (name: string) => (await api(server.url, 'POST', '/v1/sinks', adminKey, { name, table: `${namespace}.events`, warehouse: 'garden' })) as CreatedSink;
    const normal = await sink('normal');
    // Another table would do as well; one sink per table, so the slow ones get tables of their own.
    const slowSinks: CreatedSink[] = [];
    for (const name of ['slow_a', 'slow_b']) {
      await api(server.url, 'POST', '/v1/warehouses/garden/tables', adminKey, { namespace, name, columns: [{ name: 'seq', type: 'long' }] });
      slowSinks.push((await api(server.url, 'POST', '/v1/sinks', adminKey, { name, table: `${namespace}.${name}`, warehouse: 'garden' })) as CreatedSink);
    }
    const [bigSink, dripSink] = slowSinks as [CreatedSink, CreatedSink];

    // Normal producers: ~8 KB batches over keep-alive connections, as a device would send.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
    const batch = Buffer.from(JSON.stringify(Array.from({ length: 100 }, (_, i) => ({ seq: i, device: `sensor-${i % 7}-${'x'.repeat(50)}` }))));
    let sent = 0;
    const sendOne = (): Promise<{ ms: number; status: number; at: number }> =>
      new Promise((resolve) => {
        const started = process.hrtime.bigint();
        const req = http.request(
          {
            method: 'POST', host: '127.0.0.1', port, path: `/v1/sinks/${normal.id}`, agent,
            headers: { authorization: `Bearer ${normal.send_key}`, 'idempotency-key': `n-${run}-${++sent}`, 'content-type': 'application/json', 'content-length': batch.length },
          },
          (res) => {
            res.resume();
            res.on('end', () => resolve({ ms: Number(process.hrtime.bigint() - started) / 1e6, status: res.statusCode ?? 0, at: Date.now() }));
          },
        );
        req.on('error', () => resolve({ ms: Number(process.hrtime.bigint() - started) / 1e6, status: 0, at: Date.now() }));
        req.end(batch);
      });

    /** The producers' sends until `stop` says so (or for that many ms): latencies sorted, statuses counted. */
    const produce = async (stop: number | (() => boolean)) => {
      const until = typeof stop === 'number' ? Date.now() + stop : 0;
      const done = typeof stop === 'number' ? () => Date.now() >= until : stop;
      const latencies: number[] = [];
      const statuses = new Map<number, number>();
      const from = Date.now();
      /** Latencies by 10 s window from the start: where the slow ones fall. */
      const windows: number[][] = [];
      await Promise.all(
        Array.from({ length: Number(args.producers) }, async () => {
          while (!done()) {
            const { ms, status, at } = await sendOne();
            latencies.push(ms);
            (windows[Math.floor((at - from) / 10_000)] ??= []).push(ms);
            statuses.set(status, (statuses.get(status) ?? 0) + 1);
          }
        }),
      );
      return { latencies: latencies.sort((a, b) => a - b), statuses, windows: windows.map((w) => w.sort((a, b) => a - b)) };
    };
    const describeSends = (what: string, r: Awaited<ReturnType<typeof produce>>) =>
      console.log(
        `${what}: ${r.latencies.length}, statuses ${[...r.statuses].map(([st, n]) => `${st} ×${n}`).join(', ')}; ` +
          `p50 ${percentile(r.latencies, 50).toFixed(1)} ms, p99 ${percentile(r.latencies, 99).toFixed(1)} ms, max ${r.latencies.at(-1)?.toFixed(1)} ms; ` +
          `p99 by 10 s: ${r.windows.map((w) => (w.length ? percentile(w, 99).toFixed(0) : '-')).join(' ')} ms`,
      );

    for (let i = 0; i < 200; i++) await sendOne();
    // The same producers without slow clients first: what the machine gives them anyway.
    const cpuAtBaseline = cpuMsOf(pid);
    const baseline = await produce(Number(args['baseline-seconds']) * 1000);
    const baselineCpuMs = cpuMsOf(pid) - cpuAtBaseline;
    await sleep(2_000);
    const rssBefore = rssBytes(pid, 'VmRSS');
    console.log(
      `bench:slow-clients run ${run}: API pid ${pid} at ${server.url}; ${os.cpus().length} cores, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}; ` +
        `timeouts headers ${timeouts.headers} ms, request ${timeouts.request} ms, idle ${timeouts.idle} ms; body bytes in flight ≤ ${DEFAULT_IN_FLIGHT_LIMITS.processBytes / MIB} MiB per process, ${DEFAULT_IN_FLIGHT_LIMITS.sinkBytes / MIB} MiB per sink`,
    );
    console.log(`API RSS before: ${(rssBefore / MIB).toFixed(0)} MiB; ${await heapOf(server.url)}`);

    // The 200 slow connections, in a process of their own: their 400 MiB of writes and 150 drips
    // must not delay the producers' own measurements.
    let slowDone = false;
    const attack: Attack = { port, timeouts, adminKey, bigSink, dripSink };
    const allSlow = new Promise<SlowResult[]>((resolve, reject) => {
      const attacker = fork(fileURLToPath(import.meta.url), [], { execArgv: ['--import', 'tsx'], env: { ...process.env, [ATTACK_ENV]: JSON.stringify(attack) } });
      attacker.once('message', (results) => resolve(results as SlowResult[]));
      attacker.once('error', reject);
      attacker.once('exit', (code) => reject(new Error(`the attacking process exited (${code}) before reporting`)));
    }).then((results) => {
      slowDone = true;
      return results;
    });
    let peakRss = rssBefore;
    sampler = setInterval(() => {
      peakRss = Math.max(peakRss, rssBytes(pid, 'VmRSS'));
    }, 250);
    const cpuAtAttack = cpuMsOf(pid);
    const during = produce(() => slowDone);
    const results = await allSlow;
    const meanwhile = await during;
    const attackCpuMs = cpuMsOf(pid) - cpuAtAttack;
    const { latencies } = meanwhile;
    clearInterval(sampler);
    const rssAtEnd = rssBytes(pid, 'VmRSS');
    const heapAtEnd = await heapOf(server.url);

    let allWithin = true;
    for (const kind of [...new Set(results.map((r) => r.kind))]) {
      const mine = results.filter((r) => r.kind === kind);
      const closed = mine.filter((r) => r.closedAfterMs !== undefined).map((r) => r.closedAfterMs!).sort((a, b) => a - b);
      const within = closed.filter((ms) => ms <= mine[0]!.limitMs).length;
      const late = Math.max(0, (closed.at(-1) ?? 0) - mine[0]!.limitMs);
      if (within !== mine.length) allWithin = false;
      const answers = new Map<string, number>();
      for (const r of mine) answers.set(r.status ?? '(no answer)', (answers.get(r.status ?? '(no answer)') ?? 0) + 1);
      console.log(
        `${kind.padEnd(30)} ${mine.length} connections: ${closed.length} closed by the server, ${within} within ${(mine[0]!.limitMs / 1000).toFixed(1)} s; ` +
          `closed after min ${(closed[0]! / 1000).toFixed(1)} s, median ${(percentile(closed, 50) / 1000).toFixed(1)} s, max ${(closed.at(-1)! / 1000).toFixed(1)} s; ` +
          `answers: ${[...answers].map(([st, n]) => `${st} ×${n}`).join(', ')}${late > 0 ? `; the latest ${(late / 1000).toFixed(1)} s past its limit` : ''}`,
      );
      console.log(`  each (s): ${closed.map((ms) => (ms / 1000).toFixed(1)).join(' ')}`);
    }
    const p99 = percentile(latencies, 99);
    describeSends(`normal sends before, ${args['baseline-seconds']} s without slow clients`, baseline);
    describeSends('normal sends meanwhile (goal p99 < 100 ms)', meanwhile);
    // What the attack costs the API itself, apart from what the rest of the machine does to the latencies.
    console.log(
      `API CPU per normal send: alone ${(baselineCpuMs / baseline.latencies.length).toFixed(2)} ms; ` +
        `during the attack ${(attackCpuMs / latencies.length).toFixed(2)} ms (the slow connections' own work included)`,
    );
    console.log(`API RSS: before ${(rssBefore / MIB).toFixed(0)} MiB, peak during ${(peakRss / MIB).toFixed(0)} MiB, when the last slow connection closed ${(rssAtEnd / MIB).toFixed(0)} MiB (${heapAtEnd})`);
    const afterSeconds = Number(args.after);
    // A few normal sends go on after the attack, as a live intake's would.
    const trickle = setInterval(() => void sendOne(), 200);
    await sleep(afterSeconds * 1000);
    clearInterval(trickle);
    const rssAfter = rssBytes(pid, 'VmRSS');
    const ratio = rssAfter / rssBefore;
    console.log(`API RSS ${afterSeconds} s after: ${(rssAfter / MIB).toFixed(0)} MiB = ${ratio.toFixed(2)}× its start (goal ≤ 1.25×); ${await heapOf(server.url)}`);
    console.log(
      `\nSTATE.md: ${new Date().toISOString().slice(0, 16)}Z \`npm run bench:slow-clients\` (${os.cpus().length} cores, load average ${os.loadavg()[0]!.toFixed(1)}): ` +
        `${results.length} slow connections, ${results.filter((r) => r.closedAfterMs !== undefined).length} closed by the server, all within the timeouts: ${allWithin ? 'yes' : 'NO'}; ` +
        `normal sends p99 ${p99.toFixed(0)} ms (${latencies.length} sends; ${percentile(baseline.latencies, 99).toFixed(0)} ms without slow clients); RSS ${(rssBefore / MIB).toFixed(0)} → peak ${(peakRss / MIB).toFixed(0)} → ${(rssAfter / MIB).toFixed(0)} MiB after ${afterSeconds} s (${ratio.toFixed(2)}×)`,
    );
    agent.destroy();
  } finally {
    clearInterval(sampler);
    server.child.kill('SIGINT');
    await new Promise((resolve) => server.child.once('exit', resolve));
    await dropNamespaces(await stackCatalog(env), [namespace]).catch(() => undefined);
    await dropDatabase(databaseUrl).catch(() => undefined);
  }
}

interface Attack {
  port: number;
  timeouts: typeof timeouts;
  adminKey: string;
  bigSink: Pick<CreatedSink, 'id' | 'send_key'>;
  dripSink: Pick<CreatedSink, 'id' | 'send_key'>;
}

/** The 200 slow connections of the attack, each to its end. */
function runAttack({ port, timeouts: limits, adminKey, bigSink, dripSink }: Attack): Promise<SlowResult[]> {
  const giveUpMs = limits.request + limits.idle + 30_000;
  const sendHead = (target: Attack['bigSink'], length: number, id: string) =>
    `POST /v1/sinks/${target.id} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${target.send_key}\r\nIdempotency-Key: ${id}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;
  const eightMiB = Buffer.alloc(8 * MIB, 0x20);
  eightMiB[0] = 0x5b; // '['
  const slow: Array<Promise<SlowResult>> = [];
  for (let i = 0; i < 50; i++) {
    slow.push(slowClient(port, 'slow headers', `POST /v1/keys HTTP/1.1\r\nHost: 127.0.0.1\r\n`, { drip: 'X-Slow: 1\r\n', dripMs: 1_000 }, limits.headers + CHECK_SLACK_MS, giveUpMs));
    slow.push(
      slowClient(
        port, 'slow JSON body (control route)',
        `POST /v1/keys HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${adminKey}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n`,
        { drip: '{"name": "slow", "level": "read"', dripMs: 1_000 }, limits.request + CHECK_SLACK_MS, giveUpMs,
      ),
    );
    slow.push(slowClient(port, 'slow send body', sendHead(dripSink, 100_000, `d-${i}`), { drip: '[{"seq": 1}, ', dripMs: 1_000 }, limits.request + CHECK_SLACK_MS, giveUpMs));
    slow.push(slowClient(port, '16 MiB send, stalls at 8 MiB', sendHead(bigSink, 16 * MIB, `b-${i}`), { bulk: eightMiB }, Math.min(limits.idle, limits.request) + CHECK_SLACK_MS, giveUpMs));
  }
  return Promise.all(slow);
}

/** Set in the attacking process: the attack it runs and reports back. */
const ATTACK_ENV = 'TABLEMERE_BENCH_SLOW_ATTACK';

const attackOrder = process.env[ATTACK_ENV];
if (attackOrder === undefined) {
  await main();
} else {
  process.send!(await runAttack(JSON.parse(attackOrder) as Attack));
  process.disconnect();
}
