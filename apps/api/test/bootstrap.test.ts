import { randomBytes } from 'node:crypto';
import { createDatabase, createPool, dropDatabase, endPool, migrate, query, type Pool } from '@tablemere/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stackEnv, stackWarehouse } from '../../../tests/support/stack.ts';
import { bootstrap } from '../src/bootstrap.ts';
import { authenticate } from '../src/domain/api-keys.ts';
import { SecretBox } from '../src/domain/secrets.ts';
import { openWarehouse } from '../src/domain/warehouses.ts';
import { suffix } from './support/harness.ts';

const env = stackEnv();
const url = new URL(env.DATABASE_URL!);
url.pathname = `/api_boot_${suffix()}`;
const databaseUrl = url.toString();
const secretKey = randomBytes(32).toString('base64');
let pool: Pool;

beforeAll(async () => {
  await createDatabase(databaseUrl);
  await migrate(databaseUrl);
  pool = createPool(databaseUrl);
});
afterAll(async () => {
  if (pool) await endPool(pool);
  await dropDatabase(databaseUrl);
});

describe('bootstrap', () => {
  it('creates one project, admin key and warehouse even when run twice at once', async () => {
    const options = { secretKey, warehouse: stackWarehouse(env) };
    const results = await Promise.all([bootstrap(databaseUrl, options), bootstrap(pool, options)]);
    const creator = results.find((r) => r.adminKey !== undefined)!;
    const other = results.find((r) => r !== creator)!;
    expect(creator.created).toEqual({ project: true, adminKey: true, warehouse: true });
    expect(other.created).toEqual({ project: false, adminKey: false, warehouse: false });
    expect(other.adminKey).toBeUndefined();
    expect(other.adminKeyId).toBe(creator.adminKeyId);
    expect(other.warehouse).toEqual(creator.warehouse);
    expect(creator.warehouse).toMatchObject({ name: 'garden', warehouse: env.ICEBERG_WAREHOUSE, auth: { type: 'oauth2' } });

    const counts = await query<{ projects: string; keys: string; warehouses: string }>(
      pool,
      'SELECT (SELECT count(*) FROM projects) AS projects, (SELECT count(*) FROM api_keys) AS keys, (SELECT count(*) FROM warehouses) AS warehouses',
    );
    expect(counts[0]).toEqual({ projects: '1', keys: '1', warehouses: '1' });

    expect(await authenticate(pool, creator.adminKey!)).toEqual({ keyId: creator.adminKeyId, projectId: creator.projectId, level: 'admin' });
    const opened = await openWarehouse(pool, SecretBox.fromBase64(secretKey), creator.projectId, 'garden');
    expect(opened.auth).toEqual(stackWarehouse(env).auth);
    expect(opened.s3).toEqual(stackWarehouse(env).s3);
  });

  it('is a no-op on a bootstrapped database, with the names it was given', async () => {
    const again = await bootstrap(pool, { secretKey, warehouse: stackWarehouse(env) });
    expect(again.created).toEqual({ project: false, adminKey: false, warehouse: false });
    const named = await bootstrap(pool, { secretKey, projectName: 'second', warehouse: { ...stackWarehouse(env), name: 'lake' } });
    expect(named.created).toEqual({ project: true, adminKey: true, warehouse: true });
    expect(named.warehouse.name).toBe('lake');
  });
});
