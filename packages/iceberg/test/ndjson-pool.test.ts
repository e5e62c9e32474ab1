import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  appendDataFiles,
  convertNdjson,
  currentSchema,
  type NdjsonChunk,
  NdjsonConverterPool,
  putDataFile,
  RestCatalog,
  S3FileIO,
  schemaFromJson,
  writeDataFile,
} from '../src/index.ts';
import { duckdbRows, pyicebergRows, type Row } from './readers.ts';
import { catalogOptions, storeOptions, uniqueName } from './support.ts';

const schema = {
  type: 'struct' as const,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'name', required: false, type: 'string' },
    { id: 3, name: 'at', required: true, type: 'timestamptz' },
    { id: 4, name: 'score', required: false, type: 'double' },
    { id: 5, name: 'amount', required: false, type: 'decimal(12, 2)' },
    { id: 6, name: 'day', required: false, type: 'date' },
    { id: 7, name: 'tags', required: false, type: { type: 'list', 'element-id': 8, element: 'string', 'element-required': false } },
    { id: 9, name: 'received', required: false, type: 'timestamptz' },
  ],
};

/** About 3 MiB in three chunks: the pool cuts them into several tasks, so the file gets several row groups. */
function chunks(): NdjsonChunk[] {
  const base = Date.parse('2024-05-01T00:00:00Z');
  return [0, 1, 2].map((c) => {
    const lines: string[] = [];
    for (let n = c * 10_000; n < (c + 1) * 10_000; n++) {
      const row: Record<string, unknown> = { id: n, at: new Date(base + n * 1000).toISOString(), score: n / 7 };
      if (n % 3 !== 0) row['name'] = n % 5 === 0 ? `ünïcödé ${n} 😀` : `name ${n}`;
      if (n % 4 !== 0) row['amount'] = `${n}.${String(n % 100).padStart(2, '0')}`;
      if (n % 6 === 0) row['day'] = `2024-02-${String((n % 28) + 1).padStart(2, '0')}`;
      if (n % 10 === 0) row['tags'] = [`t${n}`, null, ''];
      lines.push(JSON.stringify(row));
    }
    // A reject in every chunk: the readers must not see it.
    lines.push('{"id": "not a long", "at": "2024-05-01T00:00:00Z"}');
    return { bytes: Buffer.from(`${lines.join('\n')}\n`), injected: { received: `2024-06-0${c + 1}T00:00:00Z` } };
  });
}

function byId(rows: Row[]): Row[] {
  return [...rows].sort((a, b) => Number(a['id']) - Number(b['id']));
}

describe('a Parquet file written by the converter pool, appended and read back by independent readers', () => {
  const namespace = uniqueName('it_pool');
  let catalog: RestCatalog;
  let io: S3FileIO;
  let pool: NdjsonConverterPool;
  const locations: Record<string, string> = {};

  beforeAll(async () => {
    catalog = await RestCatalog.connect(catalogOptions());
    io = new S3FileIO(storeOptions());
    pool = await NdjsonConverterPool.start({ workers: 2 });
    await catalog.createNamespace(namespace);
    const options = { injected: ['received'] };
    // The twin: the same rows through the single-threaded path, whose exactness other tests prove.
    for (const name of ['pooled', 'single']) {
      const created = await catalog.createTable(namespace, name, { schema });
      const tableSchema = schemaFromJson(currentSchema(created.metadata));
      const tableLocation = created.metadata.location;
      let dataFile;
      if (name === 'pooled') {
        const written = await pool.writeParquet(tableSchema, chunks(), options);
        expect(written.chunks.map((c) => c.ok && c.rejects.length)).toEqual([1, 1, 1]);
        expect(written.parquet?.metrics.splitOffsets?.length).toBeGreaterThan(1);
        dataFile = await putDataFile({ io, tableLocation, written: written.parquet! });
      } else {
        const converted = convertNdjson(tableSchema, chunks(), options);
        dataFile = await writeDataFile({ io, tableLocation, table: converted.table, parquet: { schema: tableSchema } });
      }
      expect(dataFile.recordCount).toBe(30_000);
      await appendDataFiles({ catalog, table: { namespace, name }, io, base: created, dataFiles: [dataFile] });
      locations[name] = (await catalog.loadTable({ namespace, name })).metadataLocation!;
    }
  });

  afterAll(async () => {
    await pool.close();
    for (const name of ['pooled', 'single']) await catalog.dropTable({ namespace, name }, { purge: true }).catch(() => undefined);
    await catalog.dropNamespace(namespace).catch(() => undefined);
    io.close();
  });

  it('PyIceberg reads the same rows as from the single-threaded file', async () => {
    const pooled = byId(await pyicebergRows(namespace, 'pooled'));
    expect(pooled).toHaveLength(30_000);
    expect(pooled).toEqual(byId(await pyicebergRows(namespace, 'single')));
  });

  it('DuckDB iceberg_scan reads the same rows as from the single-threaded file', async () => {
    const pooled = byId(await duckdbRows(locations['pooled']!));
    expect(pooled).toHaveLength(30_000);
    expect(pooled[1]).toMatchObject({ id: 1, name: 'name 1', amount: '1.01', received: '2024-06-01T00:00:00.000000+00:00' });
    expect(pooled).toEqual(byId(await duckdbRows(locations['single']!)));
  });
});
