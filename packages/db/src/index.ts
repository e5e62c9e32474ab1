export { createPool, databaseHost, endPool } from './pool.ts';
export type { Pool, PoolClient, PoolOptions } from './pool.ts';
export { query, queryOne, prepared, transaction, isPgError, PgErrorCode, DatabaseUnavailableError, isDatabaseUnavailable } from './query.ts';
export type { Queryable } from './query.ts';
export { migrate, readMigrations, defaultMigrationsDir, MigrationError } from './migrate.ts';
export type { Migration, MigrateOptions, MigrateResult, MigrationErrorKind } from './migrate.ts';
export { createDatabase, dropDatabase } from './database.ts';
