/**
 * A flood of malformed bodies against the API as its own process (issue 24): JSON nested tens
 * of thousands of levels deep (`{"a":{"a":…` and `[[[…`, 200-600 KB), broken JSON and NDJSON,
 * bodies in wrong or corrupt encodings and decompression bombs, to every route that takes a
 * body, `concurrency` at a time. Then `--after` seconds of ordinary sends (2 producers of
 * 100-row batches), as a running API gets. Prints the answers by status (goal: no 5xx) and the
 * API's RSS before, at its peak and after (goal: back within 1.25x of the start).
 *
 *   npm run bench:bad-input [-- --requests 11740 --concurrency 8 --after 30]
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { gzipSync, zstdCompressSync } from 'node:zlib';
import type { CreatedSink } from '@tablemere/contracts';
import { createDatabase, dropDatabase, migrate } from '@tablemere/db';
import { bootstrap } from '../../apps/api/src/bootstrap.ts';
import { dropNamespaces, stackCatalog, stackEnv, stackWarehouse } from '../../tests/support/stack.ts';
import { api, rssBytes, startBenchApi } from './api-process.ts';

const MIB = 1024 * 1024;
const { values: args } = parseArgs({
  options: {
    requests: { type: 'string', default: '11740' },
    concurrency: { type: 'string', default: '8' },
    after: { type: 'string', default: '30' },
    /** Only these routes: `control` (every route but the send route) or `send`. */
    only: { type: 'string' },
    /** More environment for the API process, NAME=VALUE (e.g. MALLOC_ARENA_MAX=2). */
    'api-env': { type: 'string', multiple: true, default: [] },
  },
});
const env = stackEnv();
const run = randomBytes(4).toString('hex');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Bodies nested `levels` deep, one of a few shapes, a few hundred KB each. */
function deep(levels: number, shape: number): string {
  if (shape === 0) return `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
  if (shape === 1) return `${'['.repeat(levels)}${']'.repeat(levels)}`;
  return `{"name":"x","level":"read","columns":${'[{"type":'.repeat(levels)}1${'}]'.repeat(levels)}}`;
}

async function main(): Promise<void> {
  const dbUrl = new URL(env.DATABASE_URL!);
  dbUrl.pathname = `/bench_bad_${run}`;
  const databaseUrl = dbUrl.toString();
  const secretKey = randomBytes(32).toString('base64');
  await createDatabase(databaseUrl);
  await migrate(databaseUrl);
  const { adminKey } = await bootstrap(databaseUrl, { secretKey, warehouse: stackWarehouse(env) });
  const apiEnv = Object.fromEntries(args['api-env'].map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]));
  const server = await startBenchApi(`bad-input-${run}`, databaseUrl, secretKey, { env: apiEnv });
  const pid = server.child.pid!;
  const port = Number(new URL(server.url).port);
  const namespace = `bench_bad_${run}`;
  try {
    await api(server.url, 'POST', '/v1/warehouses/garden/tables', adminKey!, { namespace, name: 'events', columns: [{ name: 'x', type: 'long' }] });
    const sink = (await api(server.url, 'POST', '/v1/sinks', adminKey!, { name: 'bad_in', table: `${namespace}.events`, warehouse: 'garden' })) as CreatedSink;
    const bomb = Buffer.concat(Array.from({ length: 1024 }, () => gzipSync(Buffer.alloc(MIB), { level: 9 })));
    const bodies: Array<{ type: string; encoding?: string; body: Buffer }> = [];
    for (const levels of [40_000, 60_000, 100_000]) for (const shape of [0, 1, 2]) bodies.push({ type: 'application/json', body: Buffer.from(deep(levels, shape)) });
    bodies.push({ type: 'application/json', body: Buffer.from('{"name": "x", "level": ') });
    bodies.push({ type: 'application/x-ndjson', body: Buffer.from(`{"x":1}\n${deep(50_000, 1)}\n`) });
    bodies.push({ type: 'application/x-ndjson', body: Buffer.from('{"x":1}\n{"x":\n') });
    bodies.push({ type: 'application/json', encoding: 'gzip', body: gzipSync(deep(50_000, 0)).subarray(0, 500) });
    bodies.push({ type: 'application/json', encoding: 'zstd', body: zstdCompressSync(Buffer.alloc(64 * MIB)) });
    bodies.push({ type: 'application/json', encoding: 'gzip', body: bomb });
    bodies.push({ type: 'application/json', encoding: 'br', body: Buffer.from('[{"x":1}]') });
    const routes = [
      { path: '/v1/keys', key: adminKey! },
      { path: '/v1/sinks', key: adminKey! },
      { path: '/v1/warehouses', key: adminKey! },
      { path: '/v1/warehouses/garden/tables', key: adminKey! },
      { path: '/v1/warehouses/garden/measure', key: adminKey! },
      { path: `/v1/sinks/${sink.id}`, key: sink.send_key },
    ];
    const targets = routes.filter((r) => args.only === undefined || (args.only === 'send') === r.path.startsWith('/v1/sinks/snk_'));
    const agent = new http.Agent({ keepAlive: true, maxSockets: Number(args.concurrency) });
    const statuses = new Map<number, number>();
    // Requests that got no answer, by what went wrong and what was sent.
    const unanswered = new Map<string, number>();
    const post = (i: number): Promise<void> =>
      new Promise((resolve) => {
        const route = targets[i % targets.length]!;
        const sent = bodies[Math.floor(i / targets.length) % bodies.length]!;
        const req = http.request(
          {
            method: 'POST', host: '127.0.0.1', port, path: route.path, agent,
            headers: {
              authorization: `Bearer ${route.key}`, 'idempotency-key': `bad-${i}`, 'content-type': sent.type, 'content-length': sent.body.length,
              ...(sent.encoding ? { 'content-encoding': sent.encoding } : {}),
            },
          },
          (res) => {
            res.resume();
            res.on('end', () => {
              statuses.set(res.statusCode ?? 0, (statuses.get(res.statusCode ?? 0) ?? 0) + 1);
              resolve();
            });
          },
        );
        req.on('error', (error: NodeJS.ErrnoException) => {
          statuses.set(0, (statuses.get(0) ?? 0) + 1);
          const what = `${error.code ?? error.message} on ${route.path.startsWith('/v1/sinks/snk_') ? 'send' : route.path} with ${sent.encoding ?? sent.type} (${sent.body.length} B)`;
          unanswered.set(what, (unanswered.get(what) ?? 0) + 1);
          resolve();
        });
        req.end(sent.body);
      });

    const before = rssBytes(pid, 'VmRSS');
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, rssBytes(pid, 'VmRSS'))), 20);
    const started = performance.now();
    let next = 0;
    const total = Number(args.requests);
    await Promise.all(
      Array.from({ length: Number(args.concurrency) }, async () => {
        while (next < total) await post(next++);
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    clearInterval(sampler);
    const rightAfter = rssBytes(pid, 'VmRSS');
    agent.destroy();
    const rows = JSON.stringify(Array.from({ length: 100 }, (_, x) => ({ x })));
    const until = Date.now() + Number(args.after) * 1000;
    let ordinary = 0;
    await Promise.all(
      [0, 1].map(async () => {
        for (; Date.now() < until; await sleep(20)) {
          const res = await fetch(`${server.url}/v1/sinks/${sink.id}`, {
            method: 'POST',
            headers: { authorization: `Bearer ${sink.send_key}`, 'idempotency-key': `ok-${run}-${++ordinary}`, 'content-type': 'application/json' },
            body: rows,
          });
          await res.arrayBuffer();
        }
      }),
    );
    const after = rssBytes(pid, 'VmRSS');
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    const metric = (name: string) => (Number(new RegExp(`^${name} (\\S+)`, 'm').exec(metrics)?.[1] ?? NaN) / MIB).toFixed(0);
    const serverErrors = [...statuses].filter(([status]) => status >= 500 || status === 0).reduce((n, [, count]) => n + count, 0);
    const line =
      `${total} malformed requests (${bodies.length} bodies x ${targets.length} routes, c=${args.concurrency}) in ${seconds.toFixed(1)} s: ` +
      `statuses ${[...statuses].sort(([a], [b]) => a - b).map(([s, n]) => `${s} x${n}`).join(', ')} (${serverErrors} of 5xx or no answer; goal 0${unanswered.size ? `; no answer: ${[...unanswered].map(([what, n]) => `${n} x ${what}`).join(', ')}` : ''}); ` +
      `API RSS ${(before / MIB).toFixed(0)} MiB before, peak ${(peak / MIB).toFixed(0)} MiB, ${(rightAfter / MIB).toFixed(0)} MiB right after, ` +
      `${(after / MIB).toFixed(0)} MiB after ${args.after} s of ordinary sends (${ordinary}) = ${(after / before).toFixed(2)}x the start (goal <= 1.25x); then V8 heap ${metric('nodejs_heap_size_total_bytes')} MiB (used ${metric('nodejs_heap_size_used_bytes')}), external ${metric('nodejs_external_memory_bytes')} MiB`;
    console.log(`bench:bad-input ${new Date().toISOString().slice(0, 16)}Z, ${os.cpus().length} cores, load average ${os.loadavg()[0]!.toFixed(1)}: ${line}`);
  } finally {
    server.child.kill('SIGTERM');
    await new Promise((resolve) => server.child.once('exit', resolve));
    await dropNamespaces(await stackCatalog(env), [namespace]);
    await dropDatabase(databaseUrl);
    console.log(`(API log: ${server.logFile})`);
  }
}

await main();
