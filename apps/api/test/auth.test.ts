import { randomBytes } from 'node:crypto';
import { CreatedKey, KeyList } from '@tablemere/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyDigest } from '../src/domain/api-keys.ts';
import { call, dropNamespace, startTestApi, suffix, type TestApi } from './support/harness.ts';

let api: TestApi;
const keys: Record<'read' | 'write' | 'admin', string> = { read: '', write: '', admin: '' };
const ns = `api_auth_${suffix()}`;

const warehouseBody = (name: string) => ({
  name,
  rest_uri: 'http://127.0.0.1:8181',
  warehouse: 's3://warehouse',
  auth: { type: 'none' },
  s3: { endpoint: 'http://127.0.0.1:8333', region: 'us-east-1' },
});
const tableBody = (name: string) => ({ namespace: ns, name, columns: [{ name: 'x', type: 'long' }] });

beforeAll(async () => {
  api = await startTestApi();
  for (const level of ['read', 'write', 'admin'] as const) {
    const res = await call(api.app, 'POST', '/v1/keys', { key: api.adminKey, body: { name: `${level} key`, level } });
    expect(res.status).toBe(201);
    keys[level] = CreatedKey.parse(res.body).key;
  }
});
afterAll(async () => {
  await dropNamespace(api.env, ns);
  await api?.close();
});

/** Every authenticated route, with a request that would succeed at the right level. */
const routes = [
  { method: 'GET', url: '/v1/keys', level: 'admin' },
  { method: 'POST', url: '/v1/keys', level: 'admin', body: { name: 'k', level: 'read' } },
  { method: 'DELETE', url: '/v1/keys/000000000000', level: 'admin' },
  { method: 'GET', url: '/v1/warehouses', level: 'read' },
  { method: 'GET', url: '/v1/warehouses/garden', level: 'read' },
  { method: 'POST', url: '/v1/warehouses', level: 'admin', body: warehouseBody('w') },
  { method: 'GET', url: '/v1/warehouses/garden/tables', level: 'read' },
  { method: 'GET', url: '/v1/warehouses/garden/tables/garden.events', level: 'read' },
  { method: 'POST', url: '/v1/warehouses/garden/tables', level: 'write', body: tableBody('t') },
  { method: 'GET', url: '/v1/connection', level: 'read' },
] as const;

describe('API key authentication', () => {
  const secret = 'A'.repeat(43);
  it.each(routes)('$method $url answers 401 without a valid key', async (route) => {
    const body = 'body' in route ? route.body : undefined;
    for (const authorization of [
      undefined,
      '',
      'Bearer',
      `Basic ${Buffer.from('a:b').toString('base64')}`,
      `Bearer tm_key_000000000000_${secret}`,
      `Bearer ${keys.admin.slice(0, -1)}x`,
      'Bearer not-a-key',
    ]) {
      const res = await call(api.app, route.method, route.url, { body, headers: authorization === undefined ? {} : { authorization } });
      expect(res.status, `${authorization}`).toBe(401);
      expect(res.body.error.code).toBe('unauthorized');
      expect(res.body.error.message).toMatch(/key/i);
    }
  });

  it.each(routes)('$method $url answers 403 forbidden below its level', async (route) => {
    const levels = ['read', 'write', 'admin'] as const;
    for (const level of levels.slice(0, levels.indexOf(route.level))) {
      const res = await call(api.app, route.method, route.url, { key: keys[level], body: 'body' in route ? route.body : undefined });
      expect(res.status, level).toBe(403);
      expect(res.body.error).toMatchObject({ code: 'forbidden', required_level: route.level, key_level: level });
    }
  });

  it('accepts the scheme in any case', async () => {
    const res = await call(api.app, 'GET', '/v1/warehouses', { headers: { authorization: `bearer ${keys.read}` } });
    expect(res.status).toBe(200);
  });
});

describe('key levels', () => {
  it('read can list but cannot create a table or a warehouse', async () => {
    expect((await call(api.app, 'GET', '/v1/warehouses', { key: keys.read })).status).toBe(200);
    expect((await call(api.app, 'POST', '/v1/warehouses/garden/tables', { key: keys.read, body: tableBody('r') })).status).toBe(403);
    expect((await call(api.app, 'POST', '/v1/warehouses', { key: keys.read, body: warehouseBody('r') })).status).toBe(403);
  });

  it('write can create a table but not a warehouse or a key', async () => {
    const res = await call(api.app, 'POST', '/v1/warehouses/garden/tables', { key: keys.write, body: tableBody('by_write') });
    expect(res.status).toBe(201);
    expect((await call(api.app, 'POST', '/v1/warehouses', { key: keys.write, body: warehouseBody('w2') })).status).toBe(403);
    expect((await call(api.app, 'POST', '/v1/keys', { key: keys.write, body: { name: 'x', level: 'read' } })).status).toBe(403);
  });

  it('admin can create keys and warehouses, and the new key works at its level', async () => {
    const created = await call(api.app, 'POST', '/v1/keys', { key: keys.admin, body: { name: 'ci', level: 'write' } });
    expect(created.status).toBe(201);
    expect(created.headers['cache-control']).toBe('no-store');
    const key = CreatedKey.parse(created.body);
    expect(key).toMatchObject({ name: 'ci', level: 'write' });
    expect(key.key).toMatch(new RegExp(`^tm_key_${key.id}_[A-Za-z0-9_-]{43}$`));
    expect((await call(api.app, 'POST', '/v1/warehouses/garden/tables', { key: key.key, body: tableBody('by_ci') })).status).toBe(201);
    expect((await call(api.app, 'POST', '/v1/warehouses', { key: keys.admin, body: warehouseBody('by_admin') })).status).toBe(201);
  });
});

describe('keys with the deprecated al_key_ prefix', () => {
  it('keep working forever; the prefix is part of the key, so the same id and secret under tm_key_ is another key', async () => {
    const id = randomBytes(6).toString('hex');
    const secret = randomBytes(32).toString('base64url');
    const older = `al_key_${id}_${secret}`;
    await api.pool.query(
      "INSERT INTO api_keys (id, project_id, name, level, key_sha256) SELECT $1, project_id, 'made before tm_key_', 'read', $2 FROM api_keys LIMIT 1",
      [id, keyDigest(older)],
    );
    expect((await call(api.app, 'GET', '/v1/warehouses', { key: older })).status).toBe(200);
    expect((await call(api.app, 'GET', '/v1/warehouses', { key: `tm_key_${id}_${secret}` })).status).toBe(401);
    expect((await call(api.app, 'POST', '/v1/keys', { key: older, body: { name: 'x', level: 'read' } })).status).toBe(403);
  });
});

describe('key management', () => {
  it('lists keys without the keys themselves and stores only a digest', async () => {
    const list = KeyList.parse((await call(api.app, 'GET', '/v1/keys', { key: api.adminKey })).body);
    expect(list.keys.map((k) => k.level)).toEqual(expect.arrayContaining(['read', 'write', 'admin']));
    const text = JSON.stringify((await call(api.app, 'GET', '/v1/keys', { key: api.adminKey })).body);
    // A key ends in its secret, 32 random bytes in base64url (43 characters, which may hold '_').
    for (const key of Object.values(keys)) expect(text).not.toContain(key.slice(-43));
    const stored = await api.pool.query<{ dump: string }>(`SELECT string_agg(api_keys::text, ' ') AS dump FROM api_keys`);
    for (const key of [...Object.values(keys), api.adminKey]) expect(stored.rows[0]!.dump).not.toContain(key.slice(-43));
  });

  it('revokes a key: it stops working at once and leaves the list', async () => {
    const { key, id } = CreatedKey.parse((await call(api.app, 'POST', '/v1/keys', { key: api.adminKey, body: { name: 'temp', level: 'read' } })).body);
    expect((await call(api.app, 'GET', '/v1/warehouses', { key })).status).toBe(200);
    const revoked = await call(api.app, 'DELETE', `/v1/keys/${id}`, { key: api.adminKey });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({ id, name: 'temp', level: 'read' });
    expect(revoked.body.revoked_at).toEqual(expect.any(String));
    expect((await call(api.app, 'GET', '/v1/warehouses', { key })).status).toBe(401);
    const list = KeyList.parse((await call(api.app, 'GET', '/v1/keys', { key: api.adminKey })).body);
    expect(list.keys.map((k) => k.id)).not.toContain(id);
    const again = await call(api.app, 'DELETE', `/v1/keys/${id}`, { key: api.adminKey });
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe('key_not_found');
  });

  it('refuses to revoke the last admin key, and allows it once another exists', async () => {
    const fresh = await startTestApi();
    try {
      const me = KeyList.parse((await call(fresh.app, 'GET', '/v1/keys', { key: fresh.adminKey })).body).keys[0]!;
      const refused = await call(fresh.app, 'DELETE', `/v1/keys/${me.id}`, { key: fresh.adminKey });
      expect(refused.status).toBe(409);
      expect(refused.body.error.code).toBe('last_admin_key');
      const other = CreatedKey.parse((await call(fresh.app, 'POST', '/v1/keys', { key: fresh.adminKey, body: { name: 'second', level: 'admin' } })).body);
      expect((await call(fresh.app, 'DELETE', `/v1/keys/${me.id}`, { key: other.key })).status).toBe(200);
      expect((await call(fresh.app, 'GET', '/v1/keys', { key: fresh.adminKey })).status).toBe(401);
    } finally {
      await fresh.close();
    }
  });

  it('records who did what in the audit log', async () => {
    const events = await api.pool.query<{ event: string; actor_key_id: string | null }>('SELECT event, actor_key_id FROM audit_events ORDER BY id');
    const names = events.rows.map((e) => e.event);
    expect(names).toEqual(expect.arrayContaining(['key.create', 'key.revoke', 'warehouse.create', 'table.create']));
    // Bootstrap acts as the platform; everything after as a key.
    expect(events.rows.filter((e) => e.actor_key_id === null).map((e) => e.event)).toEqual(['key.create', 'warehouse.create']);
  });
});
