import { describe, expect, it } from 'vitest';
import { catalogAuthFromWire, catalogAuthToWire, CatalogAuthInput } from './warehouses.ts';

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
