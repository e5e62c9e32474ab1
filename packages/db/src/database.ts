import pg from 'pg';
import { PgErrorCode, isPgError } from './query.ts';

/** The database named in a Postgres URL, and a URL for the server's maintenance database. */
function split(databaseUrl: string): { name: string; maintenanceUrl: string } {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (!/^[A-Za-z0-9_]+$/.test(name)) {
    throw new Error(`database name "${name}" must be letters, digits and underscores`);
  }
  url.pathname = '/postgres';
  return { name, maintenanceUrl: url.toString() };
}

async function onMaintenance(databaseUrl: string, work: (client: pg.Client, name: string) => Promise<void>): Promise<void> {
  const { name, maintenanceUrl } = split(databaseUrl);
  const client = new pg.Client({ connectionString: maintenanceUrl });
  await client.connect();
  try {
    await work(client, name);
  } finally {
    await client.end();
  }
}

/** Creates the database named in `databaseUrl` unless it exists. Returns whether it created it. */
export async function createDatabase(databaseUrl: string): Promise<boolean> {
  let created = false;
  await onMaintenance(databaseUrl, async (client, name) => {
    try {
      await client.query(`CREATE DATABASE "${name}"`);
      created = true;
    } catch (error) {
      if (!isPgError(error, PgErrorCode.duplicateDatabase)) throw error;
    }
  });
  return created;
}

/** Drops the database named in `databaseUrl`, closing its open connections first. */
export async function dropDatabase(databaseUrl: string): Promise<void> {
  await onMaintenance(databaseUrl, async (client, name) => {
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  });
}
