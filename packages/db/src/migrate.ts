import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

/** The repository's `migrations/` folder. */
export const defaultMigrationsDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../migrations');

/**
 * Arbitrary but fixed: every process migrating the same database takes this session-level
 * advisory lock, so two services starting at once apply each file exactly once.
 */
const MIGRATION_LOCK_ID = 7_301_942_016_733n;

const FILE_NAME = /^(\d{4})_([a-z0-9_]+)\.sql$/;

export type MigrationErrorKind = 'bad_file_name' | 'duplicate_version' | 'changed_after_apply' | 'missing_file';

export class MigrationError extends Error {
  override readonly name = 'MigrationError';
  constructor(
    readonly kind: MigrationErrorKind,
    message: string,
  ) {
    super(message);
  }
}

export interface Migration {
  version: number;
  name: string;
  sql: string;
  checksum: string;
}

export interface MigrateOptions {
  /** Folder of `NNNN_name.sql` files; defaults to the repository's `migrations/`. */
  dir?: string;
}

export interface MigrateResult {
  /** File names applied by this call, in order (empty when the database was up to date). */
  applied: string[];
}

/** Reads and orders the migration files; a stray or duplicate file is an error, never skipped. */
export async function readMigrations(dir: string): Promise<Migration[]> {
  const migrations: Migration[] = [];
  for (const file of (await readdir(dir)).sort()) {
    const match = FILE_NAME.exec(file);
    if (!match) throw new MigrationError('bad_file_name', `${file} in ${dir} is not named NNNN_name.sql`);
    const sql = await readFile(path.join(dir, file), 'utf8');
    const version = Number(match[1]);
    if (migrations.some((m) => m.version === version)) {
      throw new MigrationError('duplicate_version', `two migrations in ${dir} share version ${match[1]}`);
    }
    migrations.push({ version, name: file, sql, checksum: createHash('sha256').update(sql).digest('hex') });
  }
  return migrations;
}

/**
 * Brings the database at `databaseUrl` up to the newest migration. Each file runs in its own
 * transaction with its row in `schema_migrations`; files already applied must be unchanged.
 * Safe to call from several processes at once (advisory lock) and on every start (idempotent).
 */
export async function migrate(databaseUrl: string, options: MigrateOptions = {}): Promise<MigrateResult> {
  const migrations = await readMigrations(options.dir ?? defaultMigrationsDir);
  const client = new pg.Client({ connectionString: databaseUrl, application_name: 'tablemere-migrate' });
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_ID.toString()]);
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version    integer PRIMARY KEY,
      name       text NOT NULL,
      checksum   text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const done = await client.query<{ version: number; name: string; checksum: string }>(
      'SELECT version, name, checksum FROM schema_migrations ORDER BY version',
    );
    for (const row of done.rows) {
      const file = migrations.find((m) => m.version === row.version);
      if (!file) {
        const newest = migrations.at(-1)?.version ?? 0;
        throw new MigrationError(
          'missing_file',
          row.version > newest
            ? `the database has migration ${row.name}, newer than this release's newest (${newest}): a newer release migrated it; run that release`
            : `applied migration ${row.name} is no longer in the migrations folder`,
        );
      }
      if (file.checksum !== row.checksum) {
        throw new MigrationError('changed_after_apply', `${row.name} changed after it was applied; add a new migration instead`);
      }
    }
    const applied: string[] = [];
    for (const migration of migrations) {
      if (done.rows.some((row) => row.version === migration.version)) continue;
      await client.query('BEGIN');
      try {
        await client.query(migration.sql);
        await client.query('INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)', [
          migration.version,
          migration.name,
          migration.checksum,
        ]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK');
        throw error;
      }
      applied.push(migration.name);
    }
    return { applied };
  } finally {
    // Ending the session releases the advisory lock too, even when a statement failed.
    await client.end();
  }
}
