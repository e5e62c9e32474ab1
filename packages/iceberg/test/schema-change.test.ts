import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IcebergError, RestCatalog, commitSchemaChange, currentSchema } from '../src/index.ts';
import { pyicebergSchema } from './readers.ts';
import { catalogOptions, uniqueName } from './support.ts';

describe('schema change commit', () => {
  const namespace = uniqueName('it_schema');
  const table = { namespace, name: 'evolving' };
  let catalog: RestCatalog;

  beforeAll(async () => {
    catalog = await RestCatalog.connect(catalogOptions());
    await catalog.createNamespace(namespace);
    await catalog.createTable(namespace, table.name, {
      schema: {
        type: 'struct',
        fields: [
          { id: 1, name: 'id', required: true, type: 'long' },
          { id: 2, name: 'tags', required: false, type: { type: 'list', 'element-id': 3, element: 'string', 'element-required': false } },
        ],
      },
    });
  });

  afterAll(async () => {
    await catalog.dropTable(table, { purge: true });
    await catalog.dropNamespace(namespace);
  });

  it('adds an optional column after the last assigned id and sets properties, as PyIceberg reads it', async () => {
    const base = (await catalog.loadTable(table)).metadata;
    const lastColumnId = base['last-column-id'];
    const changed = await commitSchemaChange(catalog, table, base, {
      addColumns: [{ name: 'ingested_at', type: 'timestamptz' }],
      setProperties: { 'app.first-change': 'done' },
    });
    const schema = currentSchema(changed.metadata);
    expect(schema['schema-id']).not.toBe(currentSchema(base)['schema-id']);
    expect(schema.fields.at(-1)).toMatchObject({ id: lastColumnId + 1, name: 'ingested_at', required: false, type: 'timestamptz' });
    expect(changed.metadata['last-column-id']).toBe(lastColumnId + 1);
    expect(changed.metadata.properties?.['app.first-change']).toBe('done');

    const read = await pyicebergSchema(namespace, table.name);
    expect(read.fields.map((f) => [f['id'], f['name'], f['type'], f['required']])).toEqual([
      [1, 'id', 'long', true],
      [2, 'tags', expect.objectContaining({ type: 'list' }), false],
      [lastColumnId + 1, 'ingested_at', 'timestamptz', false],
    ]);
  });

  it('loses to a concurrent schema change with commit_conflict', async () => {
    const base = (await catalog.loadTable(table)).metadata;
    await commitSchemaChange(catalog, table, base, { addColumns: [{ name: 'winner', type: 'string' }] });
    const error = await commitSchemaChange(catalog, table, base, { addColumns: [{ name: 'loser', type: 'decimal(38, 9)' }] }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(IcebergError);
    expect((error as IcebergError).kind).toBe('commit_conflict');
    const fields = currentSchema((await catalog.loadTable(table)).metadata).fields.map((f) => f.name);
    expect(fields).toContain('winner');
    expect(fields).not.toContain('loser');
  });

  it('refuses a column name that exists and a type it cannot write', async () => {
    const base = (await catalog.loadTable(table)).metadata;
    await expect(commitSchemaChange(catalog, table, base, { addColumns: [{ name: 'id', type: 'long' }] })).rejects.toMatchObject({ kind: 'already_exists' });
    await expect(commitSchemaChange(catalog, table, base, { addColumns: [{ name: 'shape', type: 'geometry' }] })).rejects.toMatchObject({ kind: 'unsupported' });
  });
});
