import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stackEnv } from '../../../tests/support/stack.ts';
import {
  createDatabase,
  createPool,
  dropDatabase,
  endPool,
  migrate,
  MigrationError,
  query,
  readMigrations,
  defaultMigrationsDir,
  type Pool,
} from '../src/index.ts';

function freshDatabaseUrl(): string {
  const url = new URL(stackEnv().DATABASE_URL!);
  url.pathname = `/db_test_${randomBytes(4).toString('hex')}`;
  return url.toString();
}

describe('migrate', () => {
  const databaseUrl = freshDatabaseUrl();
  let pool: Pool;

  beforeAll(async () => {
    expect(await createDatabase(databaseUrl)).toBe(true);
    expect(await createDatabase(databaseUrl)).toBe(false);
    pool = createPool(databaseUrl);
  });

  afterAll(async () => {
    if (pool) await endPool(pool);
    await dropDatabase(databaseUrl);
  });

  it('applies every file once when two processes start at the same time', async () => {
    const files = (await readMigrations(defaultMigrationsDir)).map((m) => m.name);
    expect(files.length).toBeGreaterThanOrEqual(4);
    const [a, b] = await Promise.all([migrate(databaseUrl), migrate(databaseUrl)]);
    // One of them did all the work while holding the lock; the other found nothing to do.
    expect([a.applied, b.applied].sort((x, y) => y.length - x.length)).toEqual([files, []]);
    const rows = await query<{ name: string }>(pool, 'SELECT name FROM schema_migrations ORDER BY version');
    expect(rows.map((r) => r.name)).toEqual(files);
  });

  it('is a no-op on an up-to-date database', async () => {
    expect((await migrate(databaseUrl)).applied).toEqual([]);
  });

  it('creates the identity tables', async () => {
    const rows = await query<{ table_name: string }>(
      pool,
      `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name`,
    );
    expect(rows.map((r) => r.table_name)).toEqual(
      expect.arrayContaining(['projects', 'api_keys', 'warehouses', 'audit_events', 'schema_migrations']),
    );
  });

  it('refuses a migration that changed after it was applied', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'migrations-'));
    for (const m of await readMigrations(defaultMigrationsDir)) {
      await writeFile(path.join(dir, m.name), m.name.startsWith('0001') ? `${m.sql}\n-- edited\n` : m.sql);
    }
    const error = await migrate(databaseUrl, { dir }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MigrationError);
    expect((error as MigrationError).kind).toBe('changed_after_apply');
  });

  it('rolls back a failing file and records nothing for it', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'migrations-'));
    for (const m of await readMigrations(defaultMigrationsDir)) await writeFile(path.join(dir, m.name), m.sql);
    await writeFile(path.join(dir, '9000_broken.sql'), 'CREATE TABLE half_done (id int);\nSELECT no_such_column FROM projects;');
    await expect(migrate(databaseUrl, { dir })).rejects.toThrow(/no_such_column/);
    const tables = await query(pool, `SELECT 1 FROM information_schema.tables WHERE table_name = 'half_done'`);
    expect(tables).toEqual([]);
    const versions = await query(pool, 'SELECT 1 FROM schema_migrations WHERE version = 9000');
    expect(versions).toEqual([]);
  });

  it('says so when a newer release migrated the database, and when an applied file went missing', async () => {
    const all = await readMigrations(defaultMigrationsDir);
    const older = await mkdtemp(path.join(tmpdir(), 'migrations-'));
    for (const m of all.slice(0, -1)) await writeFile(path.join(older, m.name), m.sql);
    const newer = await migrate(databaseUrl, { dir: older }).catch((e: unknown) => e);
    expect(newer).toMatchObject({ kind: 'missing_file', message: expect.stringMatching(/newer than this release's newest .*run that release/) });
    const gap = await mkdtemp(path.join(tmpdir(), 'migrations-'));
    for (const m of all.filter((_, i) => i !== 1)) await writeFile(path.join(gap, m.name), m.sql);
    const missing = await migrate(databaseUrl, { dir: gap }).catch((e: unknown) => e);
    expect(missing).toMatchObject({ kind: 'missing_file', message: expect.stringMatching(/is no longer in the migrations folder/) });
  });

  it('rejects stray files in the migrations folder', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'migrations-'));
    await writeFile(path.join(dir, 'notes.txt'), 'hello');
    await expect(readMigrations(dir)).rejects.toMatchObject({ kind: 'bad_file_name' });
  });
});
