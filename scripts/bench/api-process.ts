import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { repoRoot, stackEnv } from '../../tests/support/stack.ts';
import { freePort } from '../../tests/support/ports.ts';

export interface Server {
  child: ChildProcess;
  url: string;
  logFile: string;
}

/** `script` as its own process listening on `port`, output to a log file `bench-<name>.log`; resolves once a GET of `ready` is answered. */
export async function startServer(name: string, script: string, nodeArgs: string[], env: NodeJS.ProcessEnv, port: number, ready: string): Promise<Server> {
  const logFile = path.join(os.tmpdir(), `bench-${name}.log`);
  const fd = openSync(logFile, 'a');
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', path.join(repoRoot, script)], {
    cwd: repoRoot,
    stdio: ['ignore', fd, fd],
    env: { ...process.env, ...env },
  });
  closeSync(fd);
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited (${child.exitCode}); see ${logFile}`);
    try {
      await fetch(`${url}${ready}`);
      return { child, url, logFile };
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${name} did not start within 60 s; see ${logFile}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * The API as its own process over `databaseUrl` and the stack's store, so a bench measures
 * it alone (CPU, RSS). No roller runs beside it: the backlog only grows, so its caps are
 * lifted. `env` adds or overrides variables.
 */
export async function startBenchApi(name: string, databaseUrl: string, secretKey: string, options: { nodeArgs?: string[]; env?: NodeJS.ProcessEnv } = {}): Promise<Server> {
  const stack = stackEnv();
  const port = await freePort();
  return startServer(
    name,
    'apps/api/src/start.ts',
    options.nodeArgs ?? [],
    {
      DATABASE_URL: databaseUrl,
      TABLEMERE_API_PORT: String(port),
      TABLEMERE_INTERNAL_PORT: String(await freePort()),
      TABLEMERE_SECRET_KEY: secretKey,
      TABLEMERE_BOOTSTRAP_SECRET: randomBytes(24).toString('hex'),
      AWS_ENDPOINT_URL: stack.AWS_ENDPOINT_URL,
      AWS_REGION: stack.AWS_REGION,
      AWS_ACCESS_KEY_ID: stack.AWS_ACCESS_KEY_ID,
      AWS_SECRET_ACCESS_KEY: stack.AWS_SECRET_ACCESS_KEY,
      TABLEMERE_INTAKE_BUCKET: stack.TABLEMERE_INTAKE_BUCKET,
      TABLEMERE_SINK_MAX_PENDING_BYTES: String(1e15),
      TABLEMERE_SINK_MAX_PENDING_BATCHES: String(1e12),
      TABLEMERE_MAINTENANCE_INTERVAL_SECONDS: '86400',
      ...options.env,
    },
    port,
    '/healthz',
  );
}

/** Resident set size of `pid` in bytes, from /proc (VmHWM: its peak). */
export function rssBytes(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) * 1024 : NaN;
}

/** One JSON call to the API at `url` with `key`; throws on an error answer. */
export async function api(url: string, method: string, pathname: string, key: string, body?: unknown): Promise<any> {
  const res = await fetch(`${url}${pathname}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${pathname}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

/** User + system CPU time of `pid` in ms, from /proc (clock ticks of 10 ms). */
export function cpuMsOf(pid: number | undefined, stat?: string, options: { reapedChildren?: boolean } = {}): number {
  if (pid === undefined) return 0;
  const fields = (stat ?? readFileSync(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]!.split(' ');
  // With reapedChildren, also the children that ended (a closed connection's backend, for the postmaster).
  const children = options.reapedChildren ? Number(fields[13]) + Number(fields[14]) : 0;
  return (Number(fields[11]) + Number(fields[12]) + children) * 10;
}

export interface SendAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The body's first 300 characters. */
  text: string;
}

/**
 * One POST of `body` as batch `batchId` to `sink`'s send route at `to`, over a plain keep-alive `agent`, as a producer would (fetch costs several times more CPU).
 * Without a `batchId` no Idempotency-Key is sent: a `batch_ids: content` sink names the batch by its body.
 */
export function postBatch(agent: http.Agent, to: string, sink: { id: string; send_key: string }, batchId: string | undefined, body: Buffer, encoding?: string): Promise<SendAnswer> {
  const server = new URL(to);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        method: 'POST',
        hostname: server.hostname,
        port: server.port,
        path: `/v1/sinks/${sink.id}`,
        agent,
        headers: {
          authorization: `Bearer ${sink.send_key}`,
          ...(batchId === undefined ? {} : { 'idempotency-key': batchId }),
          'content-type': 'application/json',
          'content-length': String(body.length),
          ...(encoding === undefined ? {} : { 'content-encoding': encoding }),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString().slice(0, 300) }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
