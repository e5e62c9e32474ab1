/**
 * Ledger growth benchmark: does a send's ledger work stay flat as `sink_batches` grows?
 * Every size of `--sizes` gets a scratch database of its own on the local stack's Postgres
 * (dropped at the end), filled by SQL (generate_series, sorted like the index): a week of
 * days, committed rows spread over 100 sinks, an eighth of them on the claims' own day (the
 * empty ledger has the same days, empty). Then the timed rounds go round the databases, each
 * round in another order: the API's own ledger writer (LedgerWrites: grouped claims and
 * settlements) claims and settles `--batches` new batches of one sink, `--concurrency` at
 * once with a 2 ms pause for the store between claim and settle (each round adds its batches
 * to its ledger: the empty one ends with a few tens of thousands of rows). Last, in each
 * filled database, a day's prune: one day dropped whole (its partition) and, for comparison,
 * the same number of rows of another day deleted. Prints, per size, the Postgres CPU per batch
 * (the median of the rounds; the bench's own backends, from /proc: the stack's Postgres is
 * shared, so only they are counted), claim and settle p50/p99 over all rounds, the ratios to
 * the first size (goal: within 1.25x), the prune times and the disk used.
 *
 *   npm run bench:ledger [-- --sizes 0,3000000,30000000 --batches 6000 --concurrency 50 --rounds 6]
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { createDatabase, createPool, dropDatabase, migrate, query, queryOne, type Pool } from '@tablemere/db';
import { bootstrap } from '../../apps/api/src/bootstrap.ts';
import { pruneLedgerDays } from '../../apps/api/src/domain/intake/ledger-days.ts';
import { LedgerWrites } from '../../apps/api/src/domain/intake/writes.ts';
import { stackEnv, stackWarehouse } from '../../tests/support/stack.ts';
import { cpuMsOf } from './api-process.ts';

const { values: args } = parseArgs({
  options: {
    sizes: { type: 'string', default: '0,3000000,30000000' },
    batches: { type: 'string', default: '6000' },
    concurrency: { type: 'string', default: '50' },
    rounds: { type: 'string', default: '6' },
    /** Days of settled rows the ledger holds before today (the replay window). */
    days: { type: 'string', default: '7' },
  },
});
const sizes = args.sizes.split(',').map(Number);
const batches = Number(args.batches);
const concurrency = Number(args.concurrency);
const rounds = Number(args.rounds);
const pastDays = Number(args.days);
const SINKS = 100;

const run = randomBytes(4).toString('hex');

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
};
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};
const mb = (bytes: number) => `${(bytes / 1e6).toFixed(0)} MB`;

/** CPU ms of this bench's Postgres backends (found by application name), by pid. */
async function backendCpu(pool: Pool, application: string): Promise<Map<number, number>> {
  const rows = await query<{ pid: number }>(pool, 'SELECT pid FROM pg_stat_activity WHERE application_name = $1', [application]);
  return new Map(rows.map(({ pid }) => [pid, cpuMsOf(pid)]));
}

/**
 * Index blocks of the ledger found in shared_buffers (hits) and read from outside them (the
 * OS cache or the disk). Counters reach the statistics a moment after a backend's commit.
 */
async function indexBlocks(pool: Pool): Promise<{ hit: number; read: number }> {
  await sleep(1500);
  const row = await queryOne<{ hit: string; read: string }>(
    pool,
    `SELECT coalesce(sum(idx_blks_hit), 0) AS hit, coalesce(sum(idx_blks_read), 0) AS read
       FROM pg_statio_user_indexes WHERE relid IN (SELECT relid FROM pg_partition_tree('sink_batches') WHERE isleaf)`,
  );
  return { hit: Number(row!.hit), read: Number(row!.read) };
}

interface Round {
  cpuMsPerBatch: number;
  /** The ledger's index blocks per batch, in shared_buffers and read from outside them. */
  indexHit: number;
  indexRead: number;
  claim: number[];
  settle: number[];
  statements: number;
}

/** Claims and settles `batches` new batches of `sinkId` through the API's ledger writer. */
async function claimAndSettle(ledger: Ledger, label: string): Promise<Round> {
  const { pool, projectId, application } = ledger;
  const sinkId = ledger.sinkIds[0]!;
  let statements = 0;
  const counting = {
    query: (config: { name?: string }, ...rest: unknown[]) => {
      if (config?.name === 'intake-write') statements++;
      return (pool.query as (...a: unknown[]) => unknown)(config, ...rest);
    },
  } as unknown as Pool;
  const writes = new LedgerWrites(counting);
  const claim: number[] = [];
  const settle: number[] = [];
  let next = 0;
  const blocksBefore = await indexBlocks(pool);
  const before = await backendCpu(pool, application);
  const worker = async () => {
    while (next < batches) {
      const batchId = `${run}-${ledger.size}-${label}-${next++}`;
      const t0 = performance.now();
      const claimed = await writes.claim({ sinkId, batchId, hashes: { digest: randomBytes(16) }, bytes: 1000, rows: 20, rejected: 0, reasons: [], segmentId: '0000000aa-000000000000' });
      claim.push(performance.now() - t0);
      if (!claimed) throw new Error(`claim of ${batchId} refused`);
      await sleep(2);
      const t1 = performance.now();
      if (!(await writes.settle({ sinkId, projectId, batchId, day: claimed.day, receivedAt: claimed.receivedAt, wireBytes: 1000, segmentId: '0000000aa-000000000000', segmentOffset: 0 }))) throw new Error(`settle of ${batchId} refused`);
      settle.push(performance.now() - t1);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const after = await backendCpu(pool, application);
  let cpu = 0;
  for (const [pid, ms] of after) cpu += ms - (before.get(pid) ?? 0);
  const blocksAfter = await indexBlocks(pool);
  // What the roller would do next: the batches leave the open index.
  await query(pool, `UPDATE sink_batches SET state = 'committed', committed_at = now(), snapshot_id = '1' WHERE sink_id = $1 AND state = 'pending'`, [sinkId]);
  return {
    cpuMsPerBatch: cpu / batches,
    indexHit: (blocksAfter.hit - blocksBefore.hit) / batches,
    indexRead: (blocksAfter.read - blocksBefore.read) / batches,
    claim,
    settle,
    statements,
  };
}

/** Fills the ledger up to `target` rows: committed batches over the past days and today, sorted as the index is. */
async function seed(pool: Pool, sinkIds: string[], target: number): Promise<number> {
  const have = Number((await queryOne<{ n: string }>(pool, 'SELECT count(*) AS n FROM sink_batches'))!.n);
  const missing = target - have;
  if (missing <= 0) return have;
  const days = await query<{ day: string }>(pool, `SELECT ((SELECT day FROM sink_ledger_today) - n)::text AS day FROM generate_series(0, $1::int) AS n ORDER BY 1`, [pastDays]);
  const perDay = Math.ceil(missing / days.length);
  const client = await pool.connect();
  // The seed's rows name sinks that exist; skipping the foreign-key check per row (a
  // superuser's session setting) makes filling tens of millions of rows minutes shorter.
  await client.query('SET session_replication_role = replica');
  for (const { day } of days) {
    await query(client, 'SELECT sink_ledger_add_day($1)', [day]);
    const started = performance.now();
    await query(
      client,
      `INSERT INTO sink_batches (ledger_day, rows, bytes, received_at, rejected, rejected_rows, committed_at, sink_id, batch_id, body_digest, state, snapshot_id)
       SELECT $1::date, 20, 1000, t, 0, 0, t + interval '1 minute', ($2::text[])[1 + i % $3], id, decode(md5(id), 'hex'), 'committed', '7311934027361942751'
         FROM (SELECT i, md5($4 || i) AS id, $1::date + i * interval '1 millisecond' AS t FROM generate_series(1, $5::int) AS i) AS g
        ORDER BY 8, 9`,
      [day, sinkIds, sinkIds.length, `${run}-${have}-${day}`, perDay],
    );
    console.log(`  seeded ${perDay.toLocaleString()} rows on ${day} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }
  await client.query('RESET session_replication_role');
  client.release();
  await query(pool, 'VACUUM ANALYZE sink_batches');
  // The seed's dirty pages written now, not by a checkpoint while the claims are timed.
  await query(pool, 'CHECKPOINT');
  return Number((await queryOne<{ n: string }>(pool, 'SELECT count(*) AS n FROM sink_batches'))!.n);
}

/** The ledger's size on disk: its partitions with their indexes. */
async function ledgerBytes(pool: Pool): Promise<number> {
  const row = await queryOne<{ bytes: string }>(pool, `SELECT coalesce(sum(pg_total_relation_size(relid)), 0) AS bytes FROM pg_partition_tree('sink_batches') WHERE isleaf`);
  return Number(row!.bytes);
}

/** A day's prune both ways: the oldest day dropped whole, the next one's rows deleted. */
async function prune(pool: Pool): Promise<string> {
  const [oldest, next] = await query<{ day: string; rows: string }>(
    pool,
    `SELECT d.day::text AS day, (SELECT count(*) FROM sink_batches b WHERE b.ledger_day = d.day) AS rows
       FROM sink_ledger_days d WHERE d.day < (SELECT day FROM sink_ledger_today) ORDER BY d.day LIMIT 2`,
  );
  if (!oldest || !next) return 'no past day to prune';
  // As if maintenance had found the oldest day quiet more than the window ago.
  await query(pool, `UPDATE sink_ledger_days SET quiet_since = now() - interval '8 days' WHERE day = $1`, [oldest.day]);
  let started = performance.now();
  const dropped = await pruneLedgerDays(pool, pastDays);
  const dropMs = performance.now() - started;
  if (dropped.days_dropped !== 1) throw new Error(`expected one day dropped, got ${JSON.stringify(dropped)}`);
  started = performance.now();
  const deleted = await pool.query('DELETE FROM sink_batches WHERE ledger_day = $1', [next.day]);
  const deleteMs = performance.now() - started;
  return (
    `a day's prune: ${Number(oldest.rows).toLocaleString()} rows dropped (partition) in ${dropMs.toFixed(0)} ms; ` +
    `${(deleted.rowCount ?? 0).toLocaleString()} rows of the next day deleted in one statement in ${deleteMs.toFixed(0)} ms (before vacuum)`
  );
}

/** One ledger of the run: a scratch database of its own, filled to `size` rows. */
interface Ledger {
  size: number;
  databaseUrl: string;
  application: string;
  pool: Pool;
  projectId: string;
  sinkIds: string[];
  rows: number;
}

/** A scratch database with the API's schema, a project, 100 sinks and a week of ledger days (empty). */
async function openLedger(size: number, index: number): Promise<Ledger> {
  const url = new URL(stackEnv().DATABASE_URL!);
  url.pathname = `/bench_ledger_${run}_${index}`;
  const databaseUrl = url.toString();
  const application = `bench-ledger-${run}-${index}`;
  await createDatabase(databaseUrl);
  const pool = createPool(databaseUrl, { applicationName: application, max: 4 });
  await migrate(databaseUrl);
  await bootstrap(pool, { secretKey: randomBytes(32).toString('base64'), warehouse: stackWarehouse() });
  const { project_id: projectId, id: warehouseId } = (await queryOne<{ project_id: string; id: string }>(pool, 'SELECT project_id, id FROM warehouses LIMIT 1'))!;
  const sinkIds = Array.from({ length: SINKS }, () => `snk_${randomBytes(6).toString('hex')}`);
  await query(
    pool,
    `INSERT INTO sinks (id, project_id, warehouse_id, name, namespace, table_name, table_uuid, send_key_sha256)
     SELECT id, $2, $3, id, 'bench', id, gen_random_uuid()::text, sha256(id::bytea) FROM unnest($1::text[]) AS id`,
    [sinkIds, projectId, warehouseId],
  );
  // A ledger in use always has its week of days (partitions): the claim looks for its id on
  // each, so the empty ledger has them too, and the sizes differ in rows only.
  await query(pool, 'SELECT sink_ledger_add_day((SELECT day FROM sink_ledger_today) - n) FROM generate_series(1, $1::int) AS n', [pastDays]);
  return { size, databaseUrl, application, pool, projectId, sinkIds, rows: 0 };
}

const loadLine = () =>
  `load ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`;

/**
 * Every size has a database of its own, all filled before anything is timed, and the timed
 * rounds go round the sizes (each round in another order): a machine whose speed drifts
 * over the minutes of a run (a shared host, a checkpoint) moves every size alike, instead of
 * the size that happened to be timed at that moment.
 */
async function main(): Promise<void> {
  const ledgers: Ledger[] = [];
  try {
    console.log(`bench:ledger ${new Date().toISOString()} ${loadLine()}; sizes ${sizes.join(', ')}, ${rounds} rounds of ${batches} batches each`);
    for (const [index, size] of sizes.entries()) {
      const ledger = await openLedger(size, index);
      ledgers.push(ledger);
      ledger.rows = await seed(ledger.pool, ledger.sinkIds, size);
      console.log(`ledger ${index}: ${ledger.rows.toLocaleString()} rows (${mb(await ledgerBytes(ledger.pool))} on disk)`);
    }
    // Warm-up: connections, prepared statements, caches.
    for (const ledger of ledgers) await claimAndSettle(ledger, 'warm');
    const results = new Map<Ledger, Round[]>(ledgers.map((ledger) => [ledger, []]));
    for (let r = 0; r < rounds; r++) {
      for (let i = 0; i < ledgers.length; i++) {
        const ledger = ledgers[(r + i) % ledgers.length]!;
        const round = await claimAndSettle(ledger, `r${r}`);
        results.get(ledger)!.push(round);
        console.log(`  round ${r + 1}, ${ledger.rows.toLocaleString()} rows: ${round.cpuMsPerBatch.toFixed(3)} ms CPU per batch, claim p99 ${percentile(round.claim, 99).toFixed(1)} ms`);
      }
    }
    const lines: string[] = [];
    let first: { cpu: number; claim99: number; settle99: number } | undefined;
    for (const ledger of ledgers) {
      const runs = results.get(ledger)!;
      const cpu = median(runs.map((r) => r.cpuMsPerBatch));
      const claim = runs.flatMap((r) => r.claim);
      const settle = runs.flatMap((r) => r.settle);
      const statements = runs.reduce((sum, r) => sum + r.statements, 0) / (batches * rounds);
      const hit = runs.reduce((sum, r) => sum + r.indexHit, 0) / runs.length;
      const read = runs.reduce((sum, r) => sum + r.indexRead, 0) / runs.length;
      const claim99 = percentile(claim, 99);
      const settle99 = percentile(settle, 99);
      first ??= { cpu, claim99, settle99 };
      const bytes = await ledgerBytes(ledger.pool);
      lines.push(
        `${ledger.rows.toLocaleString()} ledger rows: Postgres ${cpu.toFixed(3)} ms CPU per batch (median of ${runs.map((r) => r.cpuMsPerBatch.toFixed(3)).join(', ')}; ` +
          `${statements.toFixed(2)} statements per batch; ledger index blocks per batch ${hit.toFixed(1)} hit / ${read.toFixed(2)} read), claim p50 ${percentile(claim, 50).toFixed(1)} / p99 ${claim99.toFixed(1)} ms, ` +
          `settle p50 ${percentile(settle, 50).toFixed(1)} / p99 ${settle99.toFixed(1)} ms; vs the first size: CPU ${(cpu / first.cpu).toFixed(2)}x, ` +
          `claim p99 ${(claim99 / first.claim99).toFixed(2)}x, settle p99 ${(settle99 / first.settle99).toFixed(2)}x (goal <= 1.25x); ` +
          `ledger on disk ${mb(bytes)}${ledger.rows > 0 ? ` (${(bytes / ledger.rows).toFixed(0)} bytes per row with its indexes)` : ''}`,
      );
    }
    for (const ledger of ledgers.filter((l) => l.rows > 0)) lines.push(`  ${ledger.rows.toLocaleString()} rows, ${await prune(ledger.pool)}`);
    console.log(`\nSummary (${new Date().toISOString()}, ${loadLine()}):`);
    for (const line of lines) console.log(line);
  } finally {
    for (const ledger of ledgers) {
      ledger.pool.on('error', () => undefined);
      await ledger.pool.end();
      await dropDatabase(ledger.databaseUrl);
    }
  }
}

await main();
