import { describe, expect, it } from 'vitest';
import { IcebergError } from '../../errors.ts';
import { catalogProperties, createTableBody } from './client.ts';
import { Endpoints } from './endpoints.ts';

describe('catalog routes', () => {
  it('inserts the prefix exactly as the catalog gave it', () => {
    // Nessie's prefix arrives encoded; encoding it again asks for another branch.
    expect(new Endpoints('main%7Cwarehouse').namespaces()).toBe('/v1/main%7Cwarehouse/namespaces');
    expect(new Endpoints('warehouse').table('garden', 'events')).toBe('/v1/warehouse/namespaces/garden/tables/events');
    expect(new Endpoints(undefined).namespaces()).toBe('/v1/namespaces');
  });

  it('joins namespace levels with the separator the catalog announced', () => {
    expect(new Endpoints(undefined).namespace(['a', 'b'])).toBe('/v1/namespaces/a%1Fb');
    expect(new Endpoints(undefined, '%2E').namespace(['a', 'b'])).toBe('/v1/namespaces/a%2Eb');
    expect(new Endpoints(undefined, '%2e').namespaceParam(['a', 'b'])).toBe('a.b');
    expect(new Endpoints(undefined).namespaceParam(['a', 'b'])).toBe('a\x1fb');
    expect(new Endpoints(undefined, '%1F').table(['a b', 'c/d'], 'e f')).toBe('/v1/namespaces/a%20b%1Fc%2Fd/tables/e%20f');
  });

  it('refuses a level that holds the separator, which the catalog would split', () => {
    const dotted = new Endpoints(undefined, '%2E');
    expect(() => dotted.namespace(['a.b'])).toThrow(IcebergError);
    expect(() => dotted.namespace('a.b')).toThrow(/namespace separator/);
    expect(new Endpoints(undefined).namespace('a.b')).toBe('/v1/namespaces/a.b');
  });

  it('refuses an empty or undecodable separator', () => {
    expect(() => new Endpoints(undefined, '')).toThrow(/namespace-separator/);
    expect(() => new Endpoints(undefined, '%E0%A4%A')).toThrow(/namespace-separator/);
  });
});

describe('catalog config', () => {
  it('lays overrides over defaults', () => {
    const properties = catalogProperties({
      defaults: { prefix: 'main%7Cwarehouse', 'client.region': 'eu-west-1', 'rest-page-size': 200 },
      overrides: { 'client.region': 'us-east-1', 'namespace-separator': '%2E' },
    });
    expect(properties).toEqual({
      prefix: 'main%7Cwarehouse',
      'client.region': 'us-east-1',
      'rest-page-size': '200',
      'namespace-separator': '%2E',
    });
    expect(catalogProperties(undefined)).toEqual({});
  });
});

describe('create table body', () => {
  const schema = { type: 'struct' as const, fields: [{ id: 1, name: 'x', required: true, type: 'long' }] };

  it('always sends stage-create and an id on the partition spec and sort order', () => {
    expect(createTableBody('t', { schema, properties: { 'format-version': '2' } })).toEqual({
      name: 't',
      schema,
      'partition-spec': { 'spec-id': 0, fields: [] },
      'write-order': { 'order-id': 0, fields: [] },
      'stage-create': false,
      properties: { 'format-version': '2' },
    });
  });

  it('keeps the ids and fields it is given', () => {
    const field = { 'source-id': 1, 'field-id': 1000, name: 'x_b', transform: 'bucket[4]' };
    const sort = { transform: 'identity', 'source-id': 1, direction: 'asc', 'null-order': 'nulls-first' };
    const body = createTableBody('t', { schema, partitionSpec: { fields: [field] }, writeOrder: { fields: [sort] }, location: 's3://b/t' });
    expect(body['partition-spec']).toEqual({ 'spec-id': 0, fields: [field] });
    expect(body['write-order']).toEqual({ 'order-id': 1, fields: [sort] });
    expect(body['location']).toBe('s3://b/t');
    expect(createTableBody('t', { schema, writeOrder: { 'order-id': 3, fields: [sort] } })['write-order']).toEqual({ 'order-id': 3, fields: [sort] });
  });
});
