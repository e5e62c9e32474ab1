import { describe, expect, it } from 'vitest';
import { catalogAuthFromWire, catalogAuthToWire, CatalogAuthInput, S3Input } from './warehouses.ts';

describe('catalog auth wire form', () => {
  const cases: CatalogAuthInput[] = [
    { type: 'oauth2', client_id: 'id', client_secret: 'secret', scope: 'catalog' },
    { type: 'oauth2', client_id: 'id', client_secret: 'secret' },
    { type: 'sigv4', access_key_id: 'ak', secret_access_key: 'sk', region: 'us-east-1', service: 's3tables' },
    { type: 'bearer', token: 't' },
    { type: 'none' },
  ];

  it.each(cases)('maps $type to the client shape and back unchanged', (wire) => {
    expect(CatalogAuthInput.parse(catalogAuthToWire(catalogAuthFromWire(wire)))).toEqual(wire);
  });

  it('gives the client shape in camelCase', () => {
    expect(catalogAuthFromWire({ type: 'sigv4', access_key_id: 'ak', secret_access_key: 'sk', region: 'eu-west-1' })).toEqual({
      type: 'sigv4',
      accessKeyId: 'ak',
      secretAccessKey: 'sk',
      region: 'eu-west-1',
    });
  });
});

describe('S3Input sink_bucket', () => {
  const s3 = { endpoint: 'http://127.0.0.1:8333', region: 'us-east-1' };
  const keys = { access_key_id: 'ak', secret_access_key: 'sk' };

  it("takes an ordinary bucket's name with the warehouse's keys", () => {
    expect(S3Input.parse({ ...s3, ...keys, sink_bucket: 'tenant-sinks' })).toMatchObject({ sink_bucket: 'tenant-sinks' });
  });

  it('refuses it without keys (sinks write there as the warehouse) and refuses a bad bucket name', () => {
    expect(S3Input.safeParse({ ...s3, sink_bucket: 'tenant-sinks' }).error?.issues[0]).toMatchObject({ path: ['sink_bucket'] });
    for (const bad of ['ab', 'Tenant', 'a_b', '-ab']) expect(S3Input.safeParse({ ...s3, ...keys, sink_bucket: bad }).success, bad).toBe(false);
  });
});
