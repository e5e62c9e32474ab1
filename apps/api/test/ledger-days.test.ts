import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createDatabase, createPool, defaultMigrationsDir, dropDatabase, endPool, migrate, query, queryOne, readMigrations, type Pool } from '@tablemere/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stackWarehouse } from '../../../tests/support/stack.ts';
import { bootstrap } from '../src/bootstrap.ts';
import { advanceLedgerDay, pruneLedger } from '../src/domain/intake/ledger-days.ts';
import { ledgerEntry, storedAnswer, type AnswerColumns } from '../src/domain/intake/ledger.ts';
import { LedgerWrites, type ClaimRequest } from '../src/domain/intake/writes.ts';
import { dropNamespace, suffix } from './support/harness.ts';
import { insertBatches, insertSink, startInternalTestApi, type InternalTestApi } from './support/internal-harness.ts';
import { createSink, createTable, send } from './support/sinks.ts';
import { bodyDigest, LegacyDigests } from '../src/domain/intake/body-digest.ts';

let api: InternalTestApi;
const ns = `api_days_${suffix()}`;

beforeAll(async () => {
  api = await startInternalTestApi();
});
afterAll(async () => {
  await dropNamespace(api.env, ns);
  await api?.close();
});

const DAY = 86_400;

/** The UTC date `days` before today, as Postgres writes a date. */
const daysAgo = async (db: Pool, days: number) =>
  (await queryOne<{ day: string }>(db, `SELECT ((now() AT TIME ZONE 'UTC')::date - $1::int)::text AS day`, [days]))!.day;
const partitionOf = async (db: Pool, day: string) =>
  (await queryOne<{ oid: string | null }>(db, `SELECT to_regclass('sink_batches_' || to_char($1::date, 'YYYYMMDD'))::text AS oid`, [day]))!.oid;
const batchIds = async (db: Pool, sinkId: string) =>
  (await query<{ batch_id: string }>(db, 'SELECT batch_id FROM sink_batches WHERE sink_id = $1 ORDER BY batch_id', [sinkId])).map((r) => r.batch_id);
const claimsDay = async (db: Pool) => (await queryOne<{ day: string }>(db, 'SELECT day::text AS day FROM sink_ledger_today'))!.day;

describe('pruning the ledger by day', () => {
  it('drops a day 7 days after its last batch settled, and keeps a day where a batch waits, pruning only its old settled rows', async () => {
    const sinkId = await insertSink(api.pool, api);
    await insertBatches(api.pool, sinkId, [
      { batch_id: 'a-committed-9d', ledger_days_ago: 12, state: 'committed', settled_seconds_ago: 9 * DAY },
      { batch_id: 'a-discarded-8d', ledger_days_ago: 12, state: 'discarded', settled_seconds_ago: 8 * DAY },
      { batch_id: 'b-committed-8d', ledger_days_ago: 11, state: 'committed', settled_seconds_ago: 8 * DAY },
      { batch_id: 'b-committed-6d', ledger_days_ago: 11, state: 'committed', settled_seconds_ago: 6 * DAY },
      { batch_id: 'b-pending', ledger_days_ago: 11, age_seconds: 11 * DAY },
      { batch_id: 'c-discarded-9d', ledger_days_ago: 10, state: 'discarded', settled_seconds_ago: 9 * DAY },
      { batch_id: 'c-storing', ledger_days_ago: 10, state: 'storing', age_seconds: 10 * DAY },
    ]);
    const [a, b, c] = [await daysAgo(api.pool, 12), await daysAgo(api.pool, 11), await daysAgo(api.pool, 10)];

    // Day a has nothing waiting: quiet from now on, and kept whole for the replay window.
    // Days b and c hold a batch that waits: kept, less their rows settled over 7 days ago.
    expect(await pruneLedger(api.pool)).toMatchObject({ batches: 2, days_dropped: 0, days_kept: 2 });
    expect(await batchIds(api.pool, sinkId)).toEqual(['a-committed-9d', 'a-discarded-8d', 'b-committed-6d', 'b-pending', 'c-storing']);
    const quiet = await query<{ day: string; quiet: boolean }>(api.pool, 'SELECT day::text AS day, quiet_since IS NOT NULL AS quiet FROM sink_ledger_days WHERE day = ANY($1) ORDER BY day', [[a, b, c]]);
    expect(quiet).toEqual([{ day: a, quiet: true }, { day: b, quiet: false }, { day: c, quiet: false }]);

    // As if maintenance had first found day a quiet 8 days ago: its partition is dropped.
    await query(api.pool, `UPDATE sink_ledger_days SET quiet_since = quiet_since - interval '8 days' WHERE day = $1`, [a]);
    expect(await pruneLedger(api.pool)).toMatchObject({ batches: 0, days_dropped: 1, days_kept: 2 });
    expect(await partitionOf(api.pool, a)).toBeNull();
    expect(await partitionOf(api.pool, b)).not.toBeNull();
    expect(await batchIds(api.pool, sinkId)).toEqual(['b-committed-6d', 'b-pending', 'c-storing']);
    // The claims' day and the days ahead are never dropped.
    expect(await partitionOf(api.pool, await claimsDay(api.pool))).not.toBeNull();
    expect(await partitionOf(api.pool, await daysAgo(api.pool, -2))).not.toBeNull();
  });
});

describe('a batch id across a day change', () => {
  const claimOf = (sinkId: string, batchId: string): ClaimRequest => ({
    sinkId,
    batchId,
    hashes: { digest: bodyDigest(Buffer.from(batchId), 'array') },
    bytes: 10,
    rows: 1,
    rejected: 0,
    reasons: [],
    segmentId: '0000000aa-000000000000',
  });
  /** Waits until `count` requests wait for a lock on sink_ledger_today. */
  async function waiters(count: number): Promise<void> {
    const until = Date.now() + 1_500;
    for (;;) {
      const row = await queryOne<{ n: number }>(api.pool, `SELECT count(*)::int AS n FROM pg_locks WHERE relation = 'sink_ledger_today'::regclass AND NOT granted`);
      if (row!.n >= count) return;
      if (Date.now() > until) throw new Error(`${row!.n} waiting for sink_ledger_today, expected ${count}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  it('stays unique: a claim on the new day waits for the claims of the old day and finds them', async () => {
    const sinkId = await insertSink(api.pool, api);
    const before = await claimsDay(api.pool);
    const next = (await queryOne<{ day: string }>(api.pool, `SELECT ($1::date + 1)::text AS day`, [before]))!.day;
    const held = await api.pool.connect();
    let second: Promise<unknown>;
    try {
      // A claim of the old day, not yet committed when the day changes.
      await held.query('BEGIN');
      expect(await new LedgerWrites(held as unknown as Pool).claim(claimOf(sinkId, 'x'))).toMatchObject({ day: before });
      const moving = advanceLedgerDay(api.pool, next);
      await waiters(1);
      // A claim of the same id meanwhile: it waits for the move, which waits for the first claim.
      second = new LedgerWrites(api.pool).claim(claimOf(sinkId, 'x'));
      await waiters(2);
      await held.query('COMMIT');
      expect(await moving).toBe(next);
    } finally {
      held.release();
    }
    expect(await second).toBeUndefined();
    expect(await query(api.pool, `SELECT ledger_day::text AS day FROM sink_batches WHERE sink_id = $1 AND batch_id = 'x'`, [sinkId])).toEqual([{ day: before }]);
    const writes = new LedgerWrites(api.pool);
    expect(await writes.claim(claimOf(sinkId, 'y'))).toMatchObject({ day: next });
    expect(await writes.claim(claimOf(sinkId, 'x'))).toBeUndefined();
  });

  it('answers a replay from an earlier day with its first answer, and another body with 409', async () => {
    await createTable(api, ns, 'days');
    const sink = await createSink(api.app, api.adminKey, { name: 'days_in', table: `${ns}.days` });
    const first = await send(api.app, sink, '[{"x": 1}, 2]', { batchId: 'across' });
    expect(first.status, first.text).toBe(202);
    const day = (await queryOne<{ day: string }>(api.pool, `SELECT ledger_day::text AS day FROM sink_batches WHERE sink_id = $1`, [sink.id]))!.day;
    await advanceLedgerDay(api.pool, (await queryOne<{ day: string }>(api.pool, `SELECT ($1::date + 1)::text AS day`, [await claimsDay(api.pool)]))!.day);
    expect(await claimsDay(api.pool)).not.toBe(day);

    const replay = await send(api.app, sink, '[{"x": 1}, 2]', { batchId: 'across' });
    expect(replay.status, replay.text).toBe(200);
    expect(replay.body).toEqual(first.body);
    const other = await send(api.app, sink, '[{"x": 2}]', { batchId: 'across' });
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe('batch_id_conflict');
    expect(await query(api.pool, 'SELECT ledger_day::text AS day FROM sink_batches WHERE sink_id = $1', [sink.id])).toEqual([{ day }]);
  });
});

describe('migration 0012', () => {
  let databaseUrl: string;
  let pool: Pool;

  beforeAll(async () => {
    const from = new URL(api.databaseUrl);
    from.pathname = `/api_test_${suffix()}`;
    databaseUrl = from.toString();
    await createDatabase(databaseUrl);
    const dir = await mkdtemp(path.join(tmpdir(), 'migrations-'));
    for (const m of await readMigrations(defaultMigrationsDir)) if (m.version < 12) await writeFile(path.join(dir, m.name), m.sql);
    await migrate(databaseUrl, { dir });
    pool = createPool(databaseUrl);
  });
  afterAll(async () => {
    if (pool) await endPool(pool);
    if (databaseUrl) await dropDatabase(databaseUrl);
  });

  it('moves the rows of an existing ledger onto the days they were received, keeping answers and the replay window', async () => {
    await bootstrap(pool, { secretKey: randomBytes(32).toString('base64'), warehouse: stackWarehouse(api.env) });
    const ids = (await queryOne<{ project_id: string; id: string }>(pool, 'SELECT project_id, id FROM warehouses LIMIT 1'))!;
    const sinkId = await insertSink(pool, { projectId: ids.project_id, warehouseId: ids.id });
    const answer = (batchId: string, received: string) => ({
      accepted: 2,
      rejected: 1,
      reasons: [{ index: 1, reason: 'not_an_object' }],
      batch_id: batchId,
      bytes: 30,
      received_at: received,
      state: 'pending',
    });
    const received = async (secondsAgo: number) =>
      (await queryOne<{ t: string }>(pool, `SELECT to_char((now() - make_interval(secs => $1)) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS t`, [secondsAgo]))!.t;
    const old = [
      { id: 'pending-2d', state: 'pending', received: await received(2 * DAY), settled: null },
      { id: 'storing-now', state: 'storing', received: await received(0), settled: null },
      { id: 'committed-9d', state: 'committed', received: await received(10 * DAY), settled: 9 * DAY },
      { id: 'discarded-3d', state: 'discarded', received: await received(3 * DAY), settled: 3 * DAY },
    ];
    for (const row of old) {
      await query(
        pool,
        `INSERT INTO sink_batches (sink_id, batch_id, body_sha256, bytes, rows, rejected, received_at, state, response, snapshot_id, committed_at, discarded_at)
         VALUES ($1, $2::text, sha256(convert_to($2::text, 'UTF8')), 30, 2, 1, $3::timestamptz, $4::text, $5, CASE WHEN $4::text = 'committed' THEN '9' END,
                 CASE WHEN $4::text = 'committed' THEN now() - make_interval(secs => $6) END, CASE WHEN $4::text = 'discarded' THEN now() - make_interval(secs => $6) END)`,
        [sinkId, row.id, row.received, row.state, row.state === 'storing' ? null : JSON.stringify(answer(row.id, row.received)), row.settled],
      );
    }

    expect((await migrate(databaseUrl)).applied[0]).toBe('0012_ledger_days.sql');
    const rows = await query<{ batch_id: string; state: string; day: string; received_day: string; reasons: number[] | null }>(
      pool,
      `SELECT batch_id, state, ledger_day::text AS day, (received_at AT TIME ZONE 'UTC')::date::text AS received_day, reasons FROM sink_batches ORDER BY batch_id`,
    );
    expect(rows.map((r) => [r.batch_id, r.state, r.day === r.received_day, r.reasons])).toEqual([
      ['committed-9d', 'committed', true, [1]],
      ['discarded-3d', 'discarded', true, [1]],
      ['pending-2d', 'pending', true, [1]],
      ['storing-now', 'storing', true, null],
    ]);
    for (const row of old.filter((r) => r.state !== 'storing')) {
      expect(storedAnswer((await ledgerEntry(pool, sinkId, row.id)) as AnswerColumns)).toEqual(answer(row.id, row.received));
    }
    expect(await claimsDay(pool)).toBe(await daysAgo(pool, 0));
    // Days with nothing waiting are quiet since their last settlement: the one settled 9 days ago goes at once.
    expect(await pruneLedger(pool)).toMatchObject({ batches: 0, days_dropped: 1 });
    expect(await batchIds(pool, sinkId)).toEqual(['discarded-3d', 'pending-2d', 'storing-now']);

    // 0018: the rows keep their SHA-256 (and say so to a look); new rows take a 16-byte digest, on the old days' tables too.
    const digests = await query<{ n: number }>(pool, 'SELECT octet_length(body_digest) AS n FROM sink_batches');
    expect(digests.map((d) => d.n)).toEqual([32, 32, 32]);
    const legacy = new LegacyDigests(pool, false);
    await legacy.look();
    expect(legacy.sha256Needed).toBe(true);
    const day = await daysAgo(pool, 2);
    const insert = (batchId: string, digest: Buffer) =>
      query(
        pool,
        `INSERT INTO sink_batches (ledger_day, sink_id, batch_id, body_digest, bytes, rows, rejected, received_at, state) VALUES ($1, $2, $3, $4, 1, 1, 0, now(), 'pending')`,
        [day, sinkId, batchId, digest],
      );
    await insert('after-0018', bodyDigest(Buffer.from('[{}]'), 'array'));
    await expect(insert('neither', randomBytes(20))).rejects.toThrow(/sink_batches_body_digest_check/);
    await query(pool, 'DELETE FROM sink_batches WHERE octet_length(body_digest) = 32');
    await legacy.look();
    expect(legacy.sha256Needed).toBe(false);
  });
});
