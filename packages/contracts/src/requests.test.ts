import { describe, expect, it } from 'vitest';
import { API_KEY_PATTERN, CreateKeyRequest, SEND_KEY_PATTERN } from './keys.ts';
import { SendKey, sinkIdOfSendKey } from './sinks.ts';
import { CreateTableRequest } from './tables.ts';
import { CreateWarehouseRequest, Warehouse } from './warehouses.ts';

const warehouse = {
  name: 'garden',
  rest_uri: 'http://127.0.0.1:8181',
  warehouse: 's3://warehouse',
  auth: { type: 'oauth2', client_id: 'admin', client_secret: 'adminsecret' },
  s3: { endpoint: 'http://127.0.0.1:8333', region: 'us-east-1', access_key_id: 'admin', secret_access_key: 'adminsecret' },
};

describe('key formats', () => {
  const secret = 'A'.repeat(42) + '_';
  it('matches API and send keys and keeps them apart', () => {
    expect(API_KEY_PATTERN.exec(`tm_key_0123456789ab_${secret}`)?.[1]).toBe('0123456789ab');
    expect(API_KEY_PATTERN.test(`tm_send_0123456789ab_${secret}`)).toBe(false);
    expect(SEND_KEY_PATTERN.exec(`tm_send_0123456789ab_${secret}`)?.[1]).toBe('0123456789ab');
    expect(SEND_KEY_PATTERN.test(`tm_key_0123456789ab_${secret}`)).toBe(false);
    expect(API_KEY_PATTERN.test(`tm_key_0123456789AB_${secret}`)).toBe(false);
    expect(API_KEY_PATTERN.test(`tm_key_0123456789ab_${secret}x`)).toBe(false);
    expect(SendKey.safeParse(`tm_send_0123456789ab_${secret}`).success).toBe(true);
    expect(sinkIdOfSendKey(`tm_send_0123456789ab_${secret}`)).toBe('snk_0123456789ab');
  });

  it('still accepts the deprecated al_key_ and al_send_ prefixes, and no other', () => {
    expect(API_KEY_PATTERN.exec(`al_key_0123456789ab_${secret}`)?.[1]).toBe('0123456789ab');
    expect(API_KEY_PATTERN.test(`al_send_0123456789ab_${secret}`)).toBe(false);
    expect(SEND_KEY_PATTERN.exec(`al_send_0123456789ab_${secret}`)?.[1]).toBe('0123456789ab');
    expect(SEND_KEY_PATTERN.test(`al_key_0123456789ab_${secret}`)).toBe(false);
    expect(sinkIdOfSendKey(`al_send_0123456789ab_${secret}`)).toBe('snk_0123456789ab');
    for (const prefix of ['tx_key_', 'TM_KEY_', 'tmkey_', 'key_', 'al_tm_key_']) expect(API_KEY_PATTERN.test(`${prefix}0123456789ab_${secret}`), prefix).toBe(false);
    for (const prefix of ['tm_sent_', 'TM_SEND_', 'send_', 'tm_al_send_']) expect(SEND_KEY_PATTERN.test(`${prefix}0123456789ab_${secret}`), prefix).toBe(false);
  });

  it('accepts only the three levels', () => {
    expect(CreateKeyRequest.safeParse({ name: 'ci', level: 'write' }).success).toBe(true);
    expect(CreateKeyRequest.safeParse({ name: 'ci', level: 'owner' }).success).toBe(false);
    expect(CreateKeyRequest.safeParse({ name: '  ', level: 'read' }).success).toBe(false);
  });
});

describe('CreateWarehouseRequest', () => {
  it('accepts each catalog auth method', () => {
    for (const auth of [
      warehouse.auth,
      { type: 'sigv4', access_key_id: 'a', secret_access_key: 'b', region: 'us-east-1', service: 's3' },
      { type: 'bearer', token: 't' },
      { type: 'none' },
    ]) {
      expect(CreateWarehouseRequest.safeParse({ ...warehouse, auth }).success).toBe(true);
    }
  });

  it('rejects half a credential pair, unknown fields and unknown auth types', () => {
    const { secret_access_key: _, ...half } = warehouse.s3;
    expect(CreateWarehouseRequest.safeParse({ ...warehouse, s3: half }).success).toBe(false);
    expect(CreateWarehouseRequest.safeParse({ ...warehouse, extra: 1 }).success).toBe(false);
    expect(CreateWarehouseRequest.safeParse({ ...warehouse, auth: { type: 'kerberos' } }).success).toBe(false);
    expect(CreateWarehouseRequest.safeParse({ ...warehouse, rest_uri: 'ftp://x' }).success).toBe(false);
    expect(CreateWarehouseRequest.safeParse({ ...warehouse, name: 'Garden' }).success).toBe(false);
  });

  it('drops anything secret-looking from a warehouse response', () => {
    const shown = Warehouse.parse({
      id: '6f1c1f3e-8f7a-4c53-9b1e-0d0c3c1b2a10',
      name: 'garden',
      rest_uri: warehouse.rest_uri,
      warehouse: warehouse.warehouse,
      auth: warehouse.auth,
      s3: { ...warehouse.s3, sink_bucket: null },
      created_at: '2026-11-29T09:00:00.000Z',
    });
    expect(JSON.stringify(shown)).not.toContain('adminsecret');
  });
});

describe('CreateTableRequest', () => {
  it('normalises types and keeps required flags', () => {
    const parsed = CreateTableRequest.parse({
      namespace: 'garden',
      name: 'events',
      columns: [
        { name: 'x', type: 'LONG', required: true },
        { name: 'amount', type: 'decimal(10, 2)' },
      ],
    });
    expect(parsed.columns).toEqual([
      { name: 'x', type: 'long', required: true },
      { name: 'amount', type: 'decimal(10,2)' },
    ]);
  });

  it('rejects columns whose names differ only in case, and bad names', () => {
    const result = CreateTableRequest.safeParse({
      namespace: 'garden',
      name: 'events',
      columns: [
        { name: 'x', type: 'long' },
        { name: 'X', type: 'long' },
      ],
    });
    expect(result.error?.issues[0]?.path).toEqual(['columns', 1, 'name']);
    expect(CreateTableRequest.safeParse({ namespace: 'Garden', name: 'e', columns: [{ name: 'x', type: 'int' }] }).success).toBe(false);
    expect(CreateTableRequest.safeParse({ namespace: 'g', name: 'e', columns: [] }).success).toBe(false);
    expect(CreateTableRequest.safeParse({ namespace: 'g', name: 'e', columns: [{ name: 'a b', type: 'int' }] }).success).toBe(false);
  });
});
