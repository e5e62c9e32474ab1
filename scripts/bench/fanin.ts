/**
 * Fan-in benchmark (issue 23): a fleet on one sink. N producers (64) each send 20-row batches
 * (~1 KB) to one sink as fast as they are answered, honouring Retry-After (429, 503) and
 * sending the same batch again until it is stored. The API and the roller run as their own
 * processes from this checkout over the local stack (`npm start`): a fresh database, an intake
 * bucket of the run's own (so the store's request counters are the run's alone), the stack's
 * catalog.
 *
 *  0. a warm-up: the same fleet into a sink of its own (`--warmup` batches), deleted again, so
 *     the API, Postgres and the store are warm before anything is timed; it is also the new
 *     API process's first seconds after /readyz, printed per second against the warm rate;
 *  1. the intake alone: the roller not started, until the backlog reaches its cap or the time
 *     is up, whichever comes first;
 *  2. sustained: the roller started, for ≥ 2 minutes;
 *  3. the producers stop, the roller drains the backlog, and PyIceberg counts the table.
 *
 * Prints sends/s accepted in both phases and their ratio; refusals (429s, those answered while
 * the backlog was below its cap, and the seconds with nothing accepted while it was below its
 * cap throughout); the largest backlog; batches per roll; the roller's, Postgres's (the run
 * database's backends) and the API's CPU per batch, from /proc; object-store requests per batch
 * (SeaweedFS's own counters, by bucket and kind) and their price per million batches beside
 * Firehose's; and whether every accepted row is in the table exactly once and every refused row
 * (one batch in ten carries one) in rejects. Goals (issue 34): intake requests ≤ 0.05 per batch,
 * sustained ≥ 0.8× the intake alone, a new process at ≥ 0.8× its warm rate within 5 s of
 * /readyz, no 429 while the backlog is below its cap, exact rows.
 *
 *   npm run bench:fanin [-- --producers 64 --rows 20 --warmup 9000 --alone-seconds 30 --seconds 120]
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs, promisify } from 'node:util';
import { CreateBucketCommand, DeleteBucketCommand } from '@aws-sdk/client-s3';
import type { CreatedSink } from '@tablemere/contracts';
import { createDatabase, dropDatabase, migrate, query, queryOne } from '@tablemere/db';
import pg from 'pg';
import { createS3Client, ObjectStore } from '@tablemere/store';
import { bootstrap } from '../../apps/api/src/bootstrap.ts';
import { DEFAULT_BACKLOG_LIMITS } from '../../apps/api/src/domain/intake/backlog.ts';
import { dropNamespaces, repoRoot, stackCatalog, stackEnv, stackWarehouse } from '../../tests/support/stack.ts';
import { freePort } from '../../tests/support/ports.ts';
import { api, cpuMsOf, postBatch, startBenchApi, startServer, type SendAnswer, type Server } from './api-process.ts';

const { values: args } = parseArgs({
  options: {
    producers: { type: 'string', default: '64' },
    rows: { type: 'string', default: '20' },
    /** Batches sent to a sink of their own, then deleted, before the intake alone is timed (0: none). */
    warmup: { type: 'string', default: '9000' },
    /** The intake alone: at most this long (it ends sooner when the backlog reaches its cap). */
    'alone-seconds': { type: 'string', default: '30' },
    /** The roller running. */
    seconds: { type: 'string', default: '120' },
    /** How long the roller may take to drain what is left once the producers stop. */
    'drain-seconds': { type: 'string', default: '900' },
  },
});
const producers = Number(args.producers);
const rowsPerBatch = Number(args.rows);
const CAP = DEFAULT_BACKLOG_LIMITS.maxPendingBatches;

const env = stackEnv();
const run = randomBytes(4).toString('hex');
const started = performance.now();
const clock = () => (performance.now() - started) / 1000;
const execFileAsync = promisify(execFile);

/** A batch's rows: `seq` runs on from batch to batch, so every row of the run has its own. */
function batchBody(batch: number): Buffer {
  const rows: string[] = [];
  for (let i = 0; i < rowsPerBatch; i++) {
    const seq = batch * rowsPerBatch + i;
    rows.push(JSON.stringify({ seq, device: `dev-${(seq * 7919) % 5000}`, t: ((seq * 37) % 4000) / 10 - 50 }));
  }
  // One batch in ten carries a row the schema refuses (no seq): the roll writes it to rejects.
  if (carriesReject(batch)) rows.push(JSON.stringify({ device: `dev-${batch % 5000}`, t: 'not a number' }));
  return Buffer.from(`[${rows.join(',')}]`);
}

const carriesReject = (batch: number) => batch % 10 === 0;

/** The sum of `seq` over a batch's rows, to check the table holds exactly the accepted ones. */
const seqSum = (batch: number) => BigInt(rowsPerBatch) * BigInt(batch * rowsPerBatch) + BigInt((rowsPerBatch * (rowsPerBatch - 1)) / 2);

/** What the producers saw, per second of the run and in all. */
class Tally {
  readonly accepted: number[] = [];
  readonly refused: number[] = [];
  /** When each 429 was answered (run seconds), and with which Retry-After. */
  readonly refusals: Array<{ at: number; retryAfter: number }> = [];
  readonly latenciesMs: number[] = [];
  readonly acceptedAt: number[] = [];
  acceptedBatches = 0;
  acceptedRows = 0;
  /** Rows the schema refuses in the accepted batches (one in each batch that carries one). */
  acceptedRejects = 0;
  acceptedSeqSum = 0n;
  busy = 0;
  errors = 0;
  firstError: string | undefined;

  accept(batch: number, at: number, ms: number): void {
    const second = Math.floor(at);
    this.accepted[second] = (this.accepted[second] ?? 0) + 1;
    this.latenciesMs.push(ms);
    this.acceptedAt.push(at);
    this.acceptedBatches += 1;
    this.acceptedRows += rowsPerBatch;
    if (carriesReject(batch)) this.acceptedRejects += 1;
    this.acceptedSeqSum += seqSum(batch);
  }

  refuse(at: number, retryAfter: number): void {
    const second = Math.floor(at);
    this.refused[second] = (this.refused[second] ?? 0) + 1;
    this.refusals.push({ at, retryAfter });
  }

  /** Accepted in [from, to), by the moment of each answer. */
  acceptedIn(from: number, to: number): number {
    return this.acceptedAt.filter((at) => at >= from && at < to).length;
  }

  acceptedBetween(from: number, to: number): number {
    let n = 0;
    for (let s = Math.ceil(from); s < Math.floor(to); s++) n += this.accepted[s] ?? 0;
    return n;
  }
}

/** The backlog as the API counts it (stored or being stored, not rolled), sampled through the run. */
class BacklogSamples {
  readonly samples: Array<{ at: number; batches: number }> = [];

  /** The backlog at `at`: the samples on either side, below the cap only if both are. */
  belowCapAt(at: number): boolean {
    const after = this.samples.findIndex((s) => s.at >= at);
    if (after <= 0) return false;
    return this.samples[after - 1]!.batches < CAP && this.samples[after]!.batches < CAP;
  }

  /** Whether every sample within [from, from + 1) and its neighbours were below the cap. */
  belowCapThroughout(from: number): boolean {
    const inside = this.samples.filter((s) => s.at >= from - 0.5 && s.at < from + 1.5);
    return inside.length > 0 && inside.every((s) => s.batches < CAP);
  }

  max(): number {
    return this.samples.reduce((m, s) => Math.max(m, s.batches), 0);
  }
}

/**
 * CPU ms of the run database's Postgres backends, followed per process so backends that come
 * and go are counted while they live; the bench's own (its backlog samples) left out.
 */
class PostgresCpu {
  private readonly last = new Map<number, number>();
  total = 0;

  constructor(
    private readonly database: string,
    private readonly own: number,
  ) {}

  sample(): void {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      const pid = Number(entry);
      try {
        const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
        // A backend's title: "postgres: <user> <database> <client> <state>".
        if (pid === this.own || !cmdline.startsWith('postgres: ') || cmdline.split(' ')[2] !== this.database) continue;
        const cpu = cpuMsOf(pid);
        this.total += cpu - (this.last.get(pid) ?? 0);
        this.last.set(pid, cpu);
      } catch {
        // the process ended meanwhile
      }
    }
  }
}

/** SeaweedFS's S3 request counters, by bucket and kind (GET, PUT, LIST, DELETE, POST: a multi-object delete), from its admin port. */
async function storeRequests(adminPort: number): Promise<Map<string, number>> {
  const text = await (await fetch(`http://127.0.0.1:${adminPort}/metrics`)).text();
  const counts = new Map<string, number>();
  for (const match of text.matchAll(/^SeaweedFS_s3_request_total\{bucket="([^"]*)",code="[^"]*",type="([^"]*)"\} (\S+)$/gm)) {
    const key = `${match[1]}/${match[2]}`;
    counts.set(key, (counts.get(key) ?? 0) + Number(match[3]));
  }
  return counts;
}

/** The store's process and admin port, from the command line of the SeaweedFS serving the stack's S3 port (another stack's may run beside it). */
function seaweed(s3Port: string): { pid: number; adminPort: number } {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      const flag = cmdline.find((a) => a.startsWith('-admin.port='));
      if (path.basename(cmdline[0] ?? '') === 'weed' && flag && cmdline.includes(`-s3.port=${s3Port}`)) return { pid: Number(entry), adminPort: Number(flag.slice('-admin.port='.length)) };
    } catch {
      // the process ended meanwhile
    }
  }
  throw new Error(`no SeaweedFS process with -admin.port serving S3 on port ${s3Port}: is the local stack running?`);
}

/** This process's CPU ms: the producers (and the bench's 250 ms samples, a small part). */
const ownCpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

/**
 * List prices (USD) of the requests behind a million batches, and what Firehose would bill for
 * the same sends (research/49 gives the price pages): S3 Standard in us-east-1, PUT, COPY, POST
 * and LIST $0.005 per 1,000 (a multi-object delete is a POST: priced so, an upper bound, as DELETE
 * itself is free), GET $0.0004 per 1,000; Firehose Direct PUT, first tier, $0.029 per GB with each
 * record rounded up to 5 KB.
 */
const S3_PRICE_PER_REQUEST: Record<string, number> = { PUT: 0.005 / 1000, POST: 0.005 / 1000, LIST: 0.005 / 1000, GET: 0.0004 / 1000, DELETE: 0 };
const FIREHOSE_PER_GB = 0.029;
const FIREHOSE_RECORD_ROUNDING = 5 * 1024;

function pricePerMillion(kinds: ReadonlyMap<string, number>, batches: number, bytesPerBatch: number): string {
  let s3 = 0;
  for (const [kind, n] of kinds) s3 += (n / batches) * 1e6 * (S3_PRICE_PER_REQUEST[kind] ?? 0.005 / 1000);
  const firehose = (1e6 * Math.ceil(bytesPerBatch / FIREHOSE_RECORD_ROUNDING) * FIREHOSE_RECORD_ROUNDING * FIREHOSE_PER_GB) / 1024 ** 3;
  return `$${s3.toFixed(3)} per million batches in intake requests at S3's list prices, against $${firehose.toFixed(3)} that Firehose would bill for the same sends (${(s3 / firehose).toFixed(2)}x)`;
}

function requestsPerBatch(before: Map<string, number>, after: Map<string, number>, bucket: string, batches: number): { text: string; total: number; kinds: Map<string, number> } {
  const kinds = new Map<string, number>();
  for (const [key, value] of after) {
    const [b, kind] = key.split('/') as [string, string];
    if (b !== bucket) continue;
    const delta = value - (before.get(key) ?? 0);
    if (delta > 0) kinds.set(kind, delta);
  }
  const total = [...kinds.values()].reduce((a, b) => a + b, 0);
  const text = [...kinds].map(([kind, n]) => `${kind} ${(n / batches).toPrecision(3)}`).join(', ');
  return { text: `${(total / batches).toPrecision(3)} (${text || 'none'})`, total, kinds };
}

const READINGS_COLUMNS = [
  { name: 'seq', type: 'long', required: true },
  { name: 'device', type: 'string' },
  { name: 't', type: 'double' },
];

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

async function main(): Promise<void> {
  const dbUrl = new URL(env.DATABASE_URL!);
  const database = `bench_fanin_${run}`;
  dbUrl.pathname = `/${database}`;
  const databaseUrl = dbUrl.toString();
  const secretKey = randomBytes(32).toString('base64');
  const bootstrapSecret = randomBytes(24).toString('hex');
  const bucket = `bench-fanin-${run}`;
  const s3 = createS3Client({
    endpoint: env.AWS_ENDPOINT_URL!,
    region: env.AWS_REGION!,
    credentials: { accessKeyId: env.AWS_ACCESS_KEY_ID!, secretAccessKey: env.AWS_SECRET_ACCESS_KEY! },
  });
  const store = new ObjectStore(s3, bucket);
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  await createDatabase(databaseUrl);
  await migrate(databaseUrl);
  const boot = await bootstrap(databaseUrl, { secretKey, warehouse: stackWarehouse(env) });
  const adminKey = boot.adminKey!;
  // One connection for the bench's own reads, so its backend is known and left out of Postgres's CPU.
  const pool = new pg.Client({ connectionString: databaseUrl, application_name: 'bench-fanin' });
  await pool.connect();
  const ownBackend = (await queryOne<{ pid: number }>(pool, 'SELECT pg_backend_pid() AS pid'))!.pid;
  const internalPort = await freePort();
  const apiServer = await startBenchApi(`fanin-${run}`, databaseUrl, secretKey, {
    env: {
      TABLEMERE_SINK_MAX_PENDING_BATCHES: String(CAP),
      TABLEMERE_SINK_MAX_PENDING_BYTES: String(DEFAULT_BACKLOG_LIMITS.maxPendingBytes),
      TABLEMERE_INTERNAL_PORT: String(internalPort),
      TABLEMERE_BOOTSTRAP_SECRET: bootstrapSecret,
      TABLEMERE_INTAKE_BUCKET: bucket,
    },
  });
  // The new process counts as serving from its first /readyz 200 (what a load balancer waits for).
  while ((await fetch(`${apiServer.url}/readyz`)).status !== 200) await sleep(50);
  const readyAt = clock();
  const namespace = `bench_fanin_${run}`;
  const { pid: storePid, adminPort } = seaweed(new URL(env.AWS_ENDPOINT_URL!).port);
  const postgres = new PostgresCpu(database, ownBackend);
  let roller: Server | undefined;
  const stop = new AbortController();
  let sampler: NodeJS.Timeout | undefined;
  try {
    /** A table of the bench's columns and a sink on it. */
    const tableWithSink = async (table: string, sink: string, policy: Record<string, number> = {}): Promise<CreatedSink> => {
      await api(apiServer.url, 'POST', '/v1/warehouses/garden/tables', adminKey, { namespace, name: table, columns: READINGS_COLUMNS });
      return (await api(apiServer.url, 'POST', '/v1/sinks', adminKey, { name: sink, table: `${namespace}.${table}`, warehouse: 'garden', ...policy })) as CreatedSink;
    };
    // The default roll policy but for inactivity, so the last partial roll is not 5 minutes away once the producers stop.
    const target = await tableWithSink('readings', 'fleet', { inactivity_seconds: 10 });
    const tally = new Tally();
    const fleetBatches = { next: 0 };
    const backlog = new BacklogSamples();
    const agent = new http.Agent({ keepAlive: true, maxSockets: producers });
    console.log(
      `bench:fanin run ${run}: ${producers} producers x ${rowsPerBatch}-row batches (~${(batchBody(0).length / 1024).toFixed(1)} KiB) to one sink; backlog cap ${CAP} batches; ` +
        `API pid ${apiServer.child.pid}, ${os.cpus().length} cores, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`,
    );

    /** One producer: a new batch once the last is stored; the same batch again after Retry-After when refused. */
    const producer = async (to: CreatedSink, counts: Tally, batches: { next: number }, done: AbortSignal): Promise<void> => {
      const wait = (seconds: number) => sleep(seconds * 1000, undefined, { signal: done }).catch(() => undefined);
      while (!done.aborted) {
        const batch = batches.next++;
        const body = batchBody(batch);
        const batchId = `fanin-${batch}`;
        while (!done.aborted) {
          const t0 = performance.now();
          let answer: SendAnswer;
          try {
            answer = await postBatch(agent, apiServer.url, to, batchId, body);
          } catch (error) {
            counts.errors += 1;
            counts.firstError ??= String(error);
            await wait(1);
            continue;
          }
          // 200: a replay of a batch whose first answer was lost (a reset): stored all the same.
          if (answer.status === 202 || answer.status === 200) {
            counts.accept(batch, clock(), performance.now() - t0);
            break;
          }
          const retryAfter = Number(answer.headers['retry-after'] ?? 1);
          if (answer.status === 429) counts.refuse(clock(), retryAfter);
          else if (answer.status === 503) counts.busy += 1;
          else {
            counts.errors += 1;
            counts.firstError ??= `${answer.status} ${answer.text}`;
          }
          await wait(retryAfter);
        }
      }
    };

    const readBacklog = async () => {
      const row = await queryOne<{ batches: number }>(pool, `SELECT count(*)::int AS batches FROM sink_batches WHERE sink_id = $1 AND state IN ('storing', 'pending')`, [target.id]);
      return row!.batches;
    };
    let sampling = false;
    sampler = setInterval(() => {
      if (sampling) return;
      sampling = true;
      const at = clock();
      postgres.sample();
      void readBacklog()
        .then((batches) => backlog.samples.push({ at, batches }))
        .finally(() => (sampling = false));
    }, 250);

    // Phase 0: the warm-up, into a table and sink of its own, deleted before anything is timed.
    // It is also the new API process's first seconds, compared below with the warm intake alone.
    let fresh: { perSecond: number[]; start: number } | undefined;
    if (Number(args.warmup) > 0) {
      const warm = await tableWithSink('warmup', 'warmup');
      const warmTally = new Tally();
      const warmDone = new AbortController();
      const warmStart = clock();
      // One counter for the whole fleet, as in the timed phases: each producer its own batches.
      const warmBatches = { next: 0 };
      const warming = Array.from({ length: producers }, () => producer(warm, warmTally, warmBatches, warmDone.signal));
      while (warmTally.acceptedBatches < Number(args.warmup) && warmTally.refusals.length === 0) await sleep(100);
      warmDone.abort();
      await Promise.all(warming);
      const warmEnd = clock();
      fresh = { start: warmStart - readyAt, perSecond: [] };
      for (let s = warmStart; s + 1 <= warmEnd && fresh.perSecond.length < 10; s += 1) {
        fresh.perSecond.push(warmTally.acceptedIn(s, s + 1));
      }
      await api(apiServer.url, 'DELETE', `/v1/sinks/${warm.id}`, adminKey);
      console.log(
        `[warm-up] ${warmTally.acceptedBatches} batches to a sink of their own in ${(clock() - warmStart).toFixed(1)} s (${warmTally.errors} errors${warmTally.firstError ? `, first: ${warmTally.firstError}` : ''}), then the sink deleted`,
      );
    }

    // Phase 1: the intake alone, until the cap (the first 429) or the time is up.
    const aloneStart = clock();
    const cpu1 = { api: cpuMsOf(apiServer.child.pid), postgres: postgres.total, store: cpuMsOf(storePid), producers: ownCpuMs() };
    const store1 = await storeRequests(adminPort);
    const fleet = Array.from({ length: producers }, () => producer(target, tally, fleetBatches, stop.signal));
    while (clock() - aloneStart < Number(args['alone-seconds']) && tally.refusals.length === 0) await sleep(100);
    const aloneEnd = clock();
    postgres.sample();
    const aloneBatches = tally.acceptedBatches;
    const aloneCpu = { api: cpuMsOf(apiServer.child.pid) - cpu1.api, postgres: postgres.total - cpu1.postgres, store: cpuMsOf(storePid) - cpu1.store, producers: ownCpuMs() - cpu1.producers };
    const aloneStore = requestsPerBatch(store1, await storeRequests(adminPort), bucket, aloneBatches);
    const aloneLatencies = [...tally.latenciesMs].sort((a, b) => a - b);
    const aloneRate = aloneBatches / (aloneEnd - aloneStart);
    if (fresh) {
      const reached = fresh.perSecond.findIndex((n) => n >= 0.8 * aloneRate);
      console.log(
        `[fresh] the new API process from ${fresh.start.toFixed(1)} s after its first /readyz 200, per second: ${fresh.perSecond.join(', ') || '(the warm-up lasted under a second)'} sends ` +
          `against ${aloneRate.toFixed(0)}/s warm: ${reached < 0 ? 'never' : `from second ${reached + 1}`} at >= 0.8x ` +
          `(goal: within 5 s of /readyz; ${reached >= 0 && fresh.start + reached + 1 <= 5 ? 'met' : 'NOT met'}; --warmup sets how many batches it lasts)`,
      );
    }
    console.log(
      `[alone] ${aloneBatches} batches accepted in ${(aloneEnd - aloneStart).toFixed(1)} s = ${aloneRate.toFixed(0)} sends/s (p50 ${percentile(aloneLatencies, 50).toFixed(0)} ms, p99 ${percentile(aloneLatencies, 99).toFixed(0)} ms)` +
        `${tally.refusals.length > 0 ? ', ended at the cap' : ''}; per batch: API ${(aloneCpu.api / aloneBatches).toFixed(2)} ms CPU, Postgres ${(aloneCpu.postgres / aloneBatches).toFixed(2)} ms, ` +
        `store ≤ ${(aloneCpu.store / aloneBatches).toFixed(2)} ms (the stack's SeaweedFS, shared), producers ${(aloneCpu.producers / aloneBatches).toFixed(2)} ms; store requests ${aloneStore.text}`,
    );

    // Phase 2: the roller started; measured once it answers.
    const rollerPort = await freePort();
    roller = await startServer(
      `fanin-roller-${run}`,
      'apps/roller/src/main.ts',
      [],
      {
        TABLEMERE_INTERNAL_URL: `http://127.0.0.1:${internalPort}`,
        TABLEMERE_BOOTSTRAP_SECRET: bootstrapSecret,
        TABLEMERE_ROLLER_HOST: '127.0.0.1',
        TABLEMERE_ROLLER_PORT: String(rollerPort),
        TABLEMERE_ROLLER_ID: `bench-fanin-${run}`,
        AWS_ENDPOINT_URL: env.AWS_ENDPOINT_URL,
        AWS_REGION: env.AWS_REGION,
        AWS_ACCESS_KEY_ID: env.AWS_ACCESS_KEY_ID,
        AWS_SECRET_ACCESS_KEY: env.AWS_SECRET_ACCESS_KEY,
        LOG_LEVEL: 'info',
      },
      rollerPort,
      '/healthz',
    );
    const rollerPid = roller.child.pid;
    postgres.sample();
    const sustainedStart = clock();
    const sustainedStartDate = new Date();
    const cpu2 = { api: cpuMsOf(apiServer.child.pid), postgres: postgres.total, roller: cpuMsOf(rollerPid), store: cpuMsOf(storePid), producers: ownCpuMs() };
    const batches2 = tally.acceptedBatches;
    await sleep(Number(args.seconds) * 1000);
    const sustainedEnd = clock();
    const sustainedEndDate = new Date();
    postgres.sample();
    const sustainedCpu = {
      api: cpuMsOf(apiServer.child.pid) - cpu2.api,
      postgres: postgres.total - cpu2.postgres,
      roller: cpuMsOf(rollerPid) - cpu2.roller,
      store: cpuMsOf(storePid) - cpu2.store,
      producers: ownCpuMs() - cpu2.producers,
    };
    const sustainedBatches = tally.acceptedBatches - batches2;
    const sustainedSeconds = sustainedEnd - sustainedStart;
    const sustainedRate = sustainedBatches / sustainedSeconds;
    const lastMinute = Math.min(60, sustainedSeconds);
    const lastMinuteRate = tally.acceptedBetween(sustainedEnd - lastMinute, sustainedEnd) / lastMinute;

    // The producers stop; the roller drains the rest.
    stop.abort();
    await Promise.all(fleet);
    const drainDeadline = Date.now() + Number(args['drain-seconds']) * 1000;
    for (;;) {
      const open = await queryOne<{ n: number }>(pool, `SELECT count(*)::int AS n FROM sink_rolls WHERE sink_id = $1 AND state = 'open'`, [target.id]);
      if ((await readBacklog()) === 0 && open!.n === 0) break;
      if (Date.now() > drainDeadline) throw new Error(`the roller did not drain the backlog within ${args['drain-seconds']} s`);
      await sleep(2000);
    }
    const drained = clock();
    clearInterval(sampler);
    sampler = undefined;
    postgres.sample();
    // Each batch's whole life (sent, rolled, deleted), from the first send to the drained end.
    const life = { api: cpuMsOf(apiServer.child.pid) - cpu1.api, postgres: postgres.total - cpu1.postgres, roller: cpuMsOf(rollerPid) - cpu2.roller, store: cpuMsOf(storePid) - cpu1.store };
    const lifeStore = await storeRequests(adminPort);

    // Rolls that began in phase 2 (the first may have begun as the roller started).
    // started_at: the roll's start as its report says (the intent is recorded only after its reads and its write).
    const rolls = await query<{ batches: number; started_at: Date; closed_at: Date }>(
      pool,
      `SELECT (result->'ledger'->>'committed')::int AS batches, started_at, closed_at FROM sink_rolls
        WHERE sink_id = $1 AND state IN ('committed', 'empty') ORDER BY started_at`,
      [target.id],
    );
    const inPhase = rolls.filter((r) => r.closed_at >= sustainedStartDate && r.closed_at < sustainedEndDate);
    const rolledInPhase = inPhase.reduce((sum, r) => sum + r.batches, 0);
    const sizes = inPhase.map((r) => r.batches);
    const rollSeconds = inPhase.map((r) => (r.closed_at.getTime() - r.started_at.getTime()) / 1000);
    const gaps = inPhase.slice(1).map((r, i) => (r.started_at.getTime() - inPhase[i]!.started_at.getTime()) / 1000);
    /** How long the roller left the sink between one roll's report and the next roll's start. */
    const waits = inPhase.slice(1).map((r, i) => (r.started_at.getTime() - inPhase[i]!.closed_at.getTime()) / 1000);
    const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
    const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);

    // Refusals in phase 2: all, those answered while the backlog was below its cap, and the seconds with nothing accepted while it was below its cap throughout.
    const phase2Refusals = tally.refusals.filter((r) => r.at >= sustainedStart && r.at < sustainedEnd);
    const belowCapRefusals = phase2Refusals.filter((r) => backlog.belowCapAt(r.at)).length;
    let idleSeconds = 0;
    for (let s = Math.ceil(sustainedStart); s < Math.floor(sustainedEnd); s++) {
      if ((tally.accepted[s] ?? 0) === 0 && backlog.belowCapThroughout(s)) idleSeconds += 1;
    }
    const retryAfters = phase2Refusals.map((r) => r.retryAfter).sort((a, b) => a - b);
    const zeroSeconds = Array.from({ length: Math.floor(sustainedEnd) - Math.ceil(sustainedStart) }, (_, i) => tally.accepted[Math.ceil(sustainedStart) + i] ?? 0).filter((n) => n === 0).length;

    const intakeStore = requestsPerBatch(store1, lifeStore, bucket, tally.acceptedBatches);
    const warehouseStore = requestsPerBatch(store1, lifeStore, new URL(env.ICEBERG_WAREHOUSE!).host, tally.acceptedBatches);
    const ratio = sustainedRate / aloneRate;

    // Every accepted row in the table exactly once.
    const { stdout } = await execFileAsync(path.join(repoRoot, '.venv', 'bin', 'python'), [path.join(repoRoot, 'scripts/bench/fanin_count.py'), namespace, 'readings', 'seq'], {
      env: { ...process.env, ...env },
      maxBuffer: 64 * 1024 * 1024,
    });
    const table = JSON.parse(stdout) as { rows: number; distinct: number; sum: string };
    const rejects = ((await api(apiServer.url, 'GET', `/v1/sinks/${target.id}`, adminKey)) as { rejects: { rows_total: number } }).rejects.rows_total;
    const exact = table.rows === tally.acceptedRows && table.distinct === table.rows && BigInt(table.sum) === tally.acceptedSeqSum && rejects === tally.acceptedRejects;

    console.log(
      `[sustained] roller running ${sustainedSeconds.toFixed(0)} s: ${sustainedBatches} batches accepted = ${sustainedRate.toFixed(0)} sends/s (last ${lastMinute.toFixed(0)} s: ${lastMinuteRate.toFixed(0)}/s) = ${ratio.toFixed(2)}x the intake alone (goal >= 0.8x)`,
    );
    console.log(
      `[refusals] phase 2: ${phase2Refusals.length} x 429 (Retry-After min ${retryAfters[0] ?? '-'} / median ${percentile(retryAfters, 50) || '-'} / max ${retryAfters.at(-1) ?? '-'} s), ` +
        `${belowCapRefusals} answered while the backlog was below its cap (goal 0); ` +
        `${idleSeconds} s with nothing accepted while the backlog stayed below its cap (goal 0), ${zeroSeconds} s with nothing accepted in all; 503 ${tally.busy}, other errors ${tally.errors}${tally.firstError ? ` (${tally.firstError})` : ''}`,
    );
    console.log(
      `[rolls] ${inPhase.length} rolls closed in phase 2, ${rolledInPhase} batches: per roll mean ${mean(sizes).toFixed(0)}, min ${Math.min(...sizes)}, max ${Math.max(...sizes)}; ` +
        `one every ${mean(gaps).toFixed(1)} s, each ${mean(rollSeconds).toFixed(1)} s (start to report); between rolls the roller waited ${sum(waits).toFixed(1)} s in all (max ${Math.max(0, ...waits).toFixed(1)} s); max backlog ${backlog.max()} batches; drained ${(drained - sustainedEnd).toFixed(0)} s after the producers stopped`,
    );
    const all = tally.acceptedBatches;
    console.log(
      `[cpu] per batch over its whole life (sent, rolled, deleted; ${all} batches, first send to drained): roller ${(life.roller / all).toFixed(2)} ms, Postgres (this run's backends) ${(life.postgres / all).toFixed(2)} ms, API ${(life.api / all).toFixed(2)} ms, ` +
        `store ≤ ${(life.store / all).toFixed(2)} ms (the stack's SeaweedFS, shared: an upper bound); ` +
        `phase 2 alone: roller ${(sustainedCpu.roller / rolledInPhase).toFixed(2)} ms per batch rolled, Postgres ${(sustainedCpu.postgres / sustainedBatches).toFixed(2)} ms, API ${(sustainedCpu.api / sustainedBatches).toFixed(2)} ms, ` +
        `store ≤ ${(sustainedCpu.store / sustainedBatches).toFixed(2)} ms and producers ${(sustainedCpu.producers / sustainedBatches).toFixed(2)} ms per batch accepted (API ${(sustainedCpu.api / sustainedSeconds / 10).toFixed(0)}% of a core, its 429s included)`,
    );
    console.log(`[store] requests per batch over its whole life, intake bucket: ${intakeStore.text} (goal <= 0.05); warehouse bucket (shared with the whole stack: an upper bound): ${warehouseStore.text}`);
    console.log(`[price] ${pricePerMillion(intakeStore.kinds, tally.acceptedBatches, batchBody(1).length)}`);
    console.log(
      `[exact] accepted ${tally.acceptedRows} rows in ${tally.acceptedBatches} batches; the table (PyIceberg) has ${table.rows} rows, ${table.distinct} distinct seq, seq sum ${table.sum === tally.acceptedSeqSum.toString() ? 'equal' : `${table.sum} vs ${tally.acceptedSeqSum}`}; ` +
        `rejects ${rejects} of the ${tally.acceptedRejects} refused rows sent: ${exact ? 'exact' : 'NOT EXACT'}`,
    );
    const met = (ok: boolean) => (ok ? 'met' : 'NOT met');
    console.log(
      `goals: intake requests per batch <= 0.05: ${(intakeStore.total / tally.acceptedBatches).toPrecision(3)} ${met(intakeStore.total / tally.acceptedBatches <= 0.05)}; sustained >= 0.8x the intake alone: ${ratio.toFixed(2)}x ${met(ratio >= 0.8)}; no 429 while the backlog is below its cap: ${belowCapRefusals} ${met(belowCapRefusals === 0)}, ` +
        `no second without a send accepted while below the cap: ${idleSeconds} ${met(idleSeconds === 0)}; exact rows: ${met(exact)}`,
    );
    const date = new Date().toISOString().slice(0, 16).replace('T', ' ');
    console.log(
      `\nresearch: ${date}Z \`npm run bench:fanin\` (${os.cpus().length} cores, load average ${os.loadavg()[0]!.toFixed(1)}, ${producers} producers x ${rowsPerBatch} rows): ` +
        `alone ${aloneRate.toFixed(0)} sends/s (p50 ${percentile(aloneLatencies, 50).toFixed(0)} ms), sustained ${sustainedRate.toFixed(0)}/s over ${sustainedSeconds.toFixed(0)} s (last minute ${lastMinuteRate.toFixed(0)}/s) = ${ratio.toFixed(2)}x; ` +
        `429s ${phase2Refusals.length} (${belowCapRefusals} below the cap), idle seconds below the cap ${idleSeconds}; max backlog ${backlog.max()}; ` +
        `${inPhase.length} rolls of mean ${mean(sizes).toFixed(0)} batches every ${mean(gaps).toFixed(1)} s, each ${mean(rollSeconds).toFixed(1)} s, waits between ${sum(waits).toFixed(1)} s; ` +
        `CPU per batch (whole life) roller ${(life.roller / all).toFixed(2)} ms, Postgres ${(life.postgres / all).toFixed(2)} ms, API ${(life.api / all).toFixed(2)} ms, store ≤ ${(life.store / all).toFixed(2)} ms; ` +
        `store requests per batch ${intakeStore.text}; ${pricePerMillion(intakeStore.kinds, tally.acceptedBatches, batchBody(1).length)}; rows ${exact ? 'exact' : 'NOT exact'} (${table.rows}).`,
    );
  } finally {
    stop.abort();
    if (sampler) clearInterval(sampler);
    for (const child of [roller?.child, apiServer.child]) {
      if (!child || child.exitCode !== null) continue;
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    }
    await pool.end();
    await dropNamespaces(await stackCatalog(env), [namespace]).catch((error: unknown) => console.error(`cleanup: ${String(error)}`));
    const keys: string[] = [];
    for await (const page of store.list('')) keys.push(...page.objects.map((o) => o.key));
    await store.deleteMany(keys);
    await s3.send(new DeleteBucketCommand({ Bucket: bucket })).catch((error: unknown) => console.error(`cleanup: ${String(error)}`));
    await dropDatabase(databaseUrl);
    s3.destroy();
    console.log(`(API log: ${apiServer.logFile}${roller ? `, roller log: ${roller.logFile}` : ''})`);
  }
}

await main();
