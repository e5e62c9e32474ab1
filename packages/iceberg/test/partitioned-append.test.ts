import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot, stackEnv } from '../../../tests/support/stack.ts';
import {
  appendDataFiles,
  bindPartitionSpec,
  branchHead,
  compileRowConverter,
  currentSchema,
  defaultPartitionSpec,
  parseJsonRow,
  readManifestList,
  schemaFromJson,
  splitByPartition,
  writeDataFile,
  type RestCatalog,
  type S3FileIO,
  type TableIdent,
  type TableMetadata,
} from '../src/index.ts';
import { duckdbRows, pyicebergRows } from './readers.ts';
import { closeTestNamespace, openTestNamespace, uniqueName } from './support.ts';

const run = promisify(execFile);

/** tests/readers/partitioning.py: the owner's PyIceberg partitions the table, or plans a scan. */
async function partitioning(...args: string[]): Promise<Record<string, unknown>> {
  const { stdout } = await run(path.join(repoRoot, '.venv', 'bin', 'python'), [path.join(repoRoot, 'tests', 'readers', 'partitioning.py'), ...args], {
    env: { ...process.env, ...stackEnv() },
    maxBuffer: 64 * 1024 * 1024,
  });
  return JSON.parse(stdout) as Record<string, unknown>;
}

const schema = {
  type: 'struct' as const,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'device', required: false, type: 'string' },
    { id: 3, name: 'zone', required: false, type: 'int' },
    { id: 4, name: 'at', required: false, type: 'timestamptz' },
  ],
};

const row = (id: number) => ({
  id,
  device: `dev-${id % 5}`,
  zone: id % 3,
  at: `2026-12-0${1 + (id % 4)}T0${id % 10}:00:00.00000${id % 10}Z`,
});

/** Splits the rows by the table's default spec, writes a file per partition and appends them as one snapshot. */
async function appendRows(catalog: RestCatalog, io: S3FileIO, ident: TableIdent, rows: readonly object[]): Promise<TableMetadata> {
  const { metadata } = await catalog.loadTable(ident);
  const tableSchema = schemaFromJson(currentSchema(metadata));
  const converter = compileRowConverter(tableSchema);
  for (const r of rows) expect(converter.append(parseJsonRow(JSON.stringify(r)))).toBeNull();
  const parts = splitByPartition(converter.finish(), bindPartitionSpec(defaultPartitionSpec(metadata), tableSchema));
  const dataFiles = await Promise.all(
    parts.map((part) => writeDataFile({ io, tableLocation: metadata.location, table: part.table, parquet: { schema: tableSchema }, partition: part })),
  );
  return (await appendDataFiles({ catalog, table: ident, io, dataFiles })).metadata;
}

describe('appends to a table the owner partitioned', () => {
  const namespace = uniqueName('it_part');
  let catalog: RestCatalog;
  let io: S3FileIO;
  const ident: TableIdent = { namespace: [namespace], name: 'readings' };
  const ids = (rows: Array<Record<string, unknown>>) => rows.map((r) => Number(r.id)).sort((a, b) => a - b);

  beforeAll(async () => {
    ({ catalog, io } = await openTestNamespace(namespace));
    // Merge manifests from two on, so partitioned manifests are merged too.
    await catalog.createTable(namespace, ident.name, { schema, properties: { 'commit.manifest.min-count-to-merge': '2' } });
  });

  afterAll(async () => {
    await closeTestNamespace({ catalog, io }, namespace);
  });

  it('keeps appending after identity, bucket[16], truncate[4] and day fields are added, and readers read every row once', async () => {
    await appendRows(catalog, io, ident, [1, 2, 3].map(row));
    const { spec_id } = await partitioning('partition', namespace, ident.name, 'zone:identity', 'id:bucket[16]', 'device:truncate[4]:device_trunc', 'at:day');
    expect(spec_id).toBe(1);

    const ids1 = Array.from({ length: 60 }, (_, i) => 100 + i);
    let metadata = await appendRows(catalog, io, ident, ids1.map(row));
    const ids2 = Array.from({ length: 30 }, (_, i) => 200 + i);
    metadata = await appendRows(catalog, io, ident, ids2.map(row));
    const expected = [1, 2, 3, ...ids1, ...ids2];

    expect(ids(await pyicebergRows(namespace, ident.name))).toEqual(expected);
    const { metadataLocation } = await catalog.loadTable(ident);
    expect(ids(await duckdbRows(metadataLocation!))).toEqual(expected);

    // The head's manifests: the spec-0 one left as it was, spec 1's merged with summaries per field.
    const head = branchHead(metadata)!;
    const manifests = readManifestList(await io.get(head['manifest-list']));
    const partitioned = manifests.filter((m) => m.partition_spec_id === 1);
    expect(partitioned).toHaveLength(1);
    expect(partitioned[0]!.partitions).toHaveLength(4);
    expect(Buffer.from(partitioned[0]!.partitions![0]!.lower_bound!).readInt32LE()).toBe(0);
    expect(Buffer.from(partitioned[0]!.partitions![0]!.upper_bound!).readInt32LE()).toBe(2);
  });

  it('lets a partition filter prune files, and the rows it reads are the right ones', async () => {
    const all = [1, 2, 3, ...Array.from({ length: 60 }, (_, i) => 100 + i), ...Array.from({ length: 30 }, (_, i) => 200 + i)];
    const plan = await partitioning('plan', namespace, ident.name, 'zone', '1');
    expect(plan.planned).toBeGreaterThan(0);
    expect(plan.planned).toBeLessThan(plan.files as number);
    expect(ids(plan.rows as Array<Record<string, unknown>>)).toEqual(all.filter((id) => id % 3 === 1));
    // PyIceberg prunes by its own bucket, truncate and day of the literal: a value filed under
    // another partition than PyIceberg computes would vanish from these scans.
    const filters: Array<[string, unknown, number[]]> = [
      ['id', 150, [150]],
      ['id', 217, [217]],
      ['device', 'dev-3', all.filter((id) => id % 5 === 3)],
      // PyIceberg's literal parser takes +00:00, not Z.
      ['at', row(207).at.replace('Z', '+00:00'), all.filter((id) => row(id).at === row(207).at)],
    ];
    for (const [column, value, expected] of filters) {
      const scan = await partitioning('plan', namespace, ident.name, column, JSON.stringify(value));
      expect({ column, ids: ids(scan.rows as Array<Record<string, unknown>>) }).toEqual({ column, ids: expected });
      expect(scan.planned).toBeLessThan(scan.files as number);
    }
  });
});
