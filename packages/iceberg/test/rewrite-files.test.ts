import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { parquetMetadata } from 'hyparquet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot, stackEnv } from '../../../tests/support/stack.ts';
import {
  ENTRY_STATUS,
  IcebergError,
  RestCatalog,
  S3FileIO,
  appendDataFiles,
  branchHead,
  commitSchemaChange,
  indexById,
  readManifestEntries,
  readManifestList,
  rewriteDataFiles,
  schemaFromJson,
  type FileIO,
  type LoadTableResult,
  type ManifestEntry,
  type TableIdent,
  type TableMetadata,
} from '../src/index.ts';
import { parquetArrowSchema, readParquetRowGroups } from '../src/writer/parquet-read.ts';
import { startFaultyProxy } from './faulty-proxy.ts';
import { duckdbRows, pyicebergRows, type Row } from './readers.ts';
import { catalogOptions, closeTestNamespace, jsonRowsToDataFile, openTestNamespace, uniqueName } from './support.ts';

const schema = {
  type: 'struct' as const,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 's', required: false, type: 'string' },
    { id: 3, name: 'tstz', required: false, type: 'timestamptz' },
    { id: 4, name: 'dec', required: false, type: 'decimal(38, 10)' },
    { id: 5, name: 'u', required: false, type: 'uuid' },
    { id: 6, name: 'dt', required: false, type: 'date' },
    {
      id: 7,
      name: 'st',
      required: false,
      type: {
        type: 'struct',
        fields: [
          { id: 8, name: 'a', required: false, type: 'int' },
          { id: 9, name: 'tags', required: false, type: { type: 'list', 'element-id': 10, element: 'string', 'element-required': false } },
        ],
      },
    },
    { id: 11, name: 'li', required: false, type: { type: 'list', 'element-id': 12, element: 'long', 'element-required': true } },
    { id: 13, name: '__ingest_ts', required: false, type: 'timestamptz' },
  ],
};

const ROWS_PER_FILE = 3;

/** Row `id` of a test table: varied values, nulls where `id` says so, a few extremes. */
function row(id: number): Record<string, unknown> {
  const day = String(1 + (id % 28)).padStart(2, '0');
  return {
    id,
    s: id % 4 === 0 ? null : `row ${id} ${'é'.repeat(id % 3)}`,
    tstz: id % 5 === 0 ? null : `2026-03-${day}T${String(id % 24).padStart(2, '0')}:00:00.${String(id).padStart(6, '0')}+02:00`,
    dec: id % 6 === 0 ? null : `${id === 1 ? '-' : ''}${id}${'9'.repeat(20)}.${String(id).padStart(10, '0')}`,
    u: id % 7 === 0 ? null : `${id.toString(16).padStart(8, '0')}-0000-4000-8000-${(id * 997).toString(16).padStart(12, '0')}`,
    dt: `2025-${String(1 + (id % 12)).padStart(2, '0')}-${day}`,
    st: id % 3 === 0 ? null : { a: id % 2 === 0 ? null : -id, tags: id % 2 === 0 ? [] : [`t${id}`, null] },
    li: id % 8 === 0 ? null : [id, -(2n ** 62n) - BigInt(id)],
    __ingest_ts: `2026-04-01T00:00:${String(id % 60).padStart(2, '0')}.${String(id * 7).padStart(6, '0')}Z`,
  };
}

function json(value: unknown): string {
  return JSON.stringify(value, (_, v: unknown) => (typeof v === 'bigint' ? `@@${v}@@` : v)).replace(/"@@(-?\d+)@@"/g, '$1');
}

/** Readers hand uuids over as text or raw bytes; compare as text, rows in id order. */
function normalised(rows: Row[]): Row[] {
  return rows
    .map((r) => {
      const u = r['u'];
      if (typeof u !== 'string' || u.includes('-')) return r;
      const hex = Buffer.from(u, 'base64').toString('hex');
      return { ...r, u: `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}` };
    })
    .sort((a, b) => Number(a['id']) - Number(b['id']));
}

const run = promisify(execFile);

/** Runs Python with PyIceberg against the stack (another engine), `table` loaded as `t`. */
async function pyiceberg(table: TableIdent, code: string): Promise<void> {
  const prelude = [
    'import pyarrow as pa',
    'from pyiceberg.expressions import *',
    'from connections import catalog',
    `t = catalog().load_table((${JSON.stringify(table.namespace)}, ${JSON.stringify(table.name)}))`,
  ].join('\n');
  await run(path.join(repoRoot, '.venv', 'bin', 'python'), ['-c', `${prelude}\n${code}`], {
    env: { ...process.env, ...stackEnv() },
    cwd: path.join(repoRoot, 'tests', 'readers'),
  });
}

/** A FileIO that remembers what was written through it. */
function recording(io: FileIO): FileIO & { puts: string[] } {
  const puts: string[] = [];
  return {
    puts,
    put: async (location, bytes, options) => {
      puts.push(location);
      await io.put(location, bytes, options);
    },
    get: (location) => io.get(location),
    delete: (location) => io.delete(location),
    exists: (location) => io.exists(location),
  };
}

const fastRetry = { attempts: 5, minBackoffMs: 20, maxBackoffMs: 200 };

describe('rewriteDataFiles on the real catalog', () => {
  const namespace = uniqueName('it_rewrite');
  let catalog: RestCatalog;
  let io: S3FileIO;
  let tableCount = 0;

  beforeAll(async () => ({ catalog, io } = await openTestNamespace(namespace)));

  /**
   * A rewrite during which PyIceberg runs `code` on the table as the first commit attempt
   * validates its base: another engine winning the race. `calls()`: the validations so far.
   */
  function besideRival(table: TableIdent, io: FileIO, code: string) {
    let calls = 0;
    const rewrite = rewriteDataFiles({
      catalog,
      table,
      io,
      retry: fastRetry,
      validateBase: async () => {
        calls += 1;
        if (calls === 1) await pyiceberg(table, code);
      },
    });
    return { rewrite, calls: () => calls };
  }

  afterAll(() => closeTestNamespace({ catalog, io }, namespace));

  async function newTable(properties: Record<string, string> = {}, tableSchema: typeof schema = schema): Promise<{ table: TableIdent; created: LoadTableResult }> {
    tableCount += 1;
    const table = { namespace, name: `t${tableCount}` };
    return { table, created: await catalog.createTable(namespace, table.name, { schema: tableSchema, properties }) };
  }

  /** One append per file, `ROWS_PER_FILE` rows each, ids from `firstId` on; returns the table after. */
  async function appendFiles(table: TableIdent, files: number, firstId = 1, columns?: (r: Record<string, unknown>) => Record<string, unknown>): Promise<TableMetadata> {
    let metadata = (await catalog.loadTable(table)).metadata;
    for (let f = 0; f < files; f++) {
      const ids = Array.from({ length: ROWS_PER_FILE }, (_, i) => firstId + f * ROWS_PER_FILE + i);
      const rows = ids.map((id) => json(columns ? columns(row(id)) : row(id)));
      const dataFile = await jsonRowsToDataFile(io, metadata, rows);
      metadata = (await appendDataFiles({ catalog, table, io, dataFiles: [dataFile] })).metadata;
    }
    return metadata;
  }

  async function liveEntries(metadata: TableMetadata): Promise<Array<{ entry: ManifestEntry; manifest: string }>> {
    const out = [];
    for (const manifest of readManifestList(await io.get(branchHead(metadata)!['manifest-list']))) {
      for (const entry of readManifestEntries(await io.get(manifest.manifest_path), manifest)) out.push({ entry, manifest: manifest.manifest_path });
    }
    return out;
  }

  it('rewrites 20 small files as one, every value, field id and sequence number as it should be', async () => {
    const { table } = await newTable();
    const before = await appendFiles(table, 20);
    const originals = (await liveEntries(before)).map((l) => l.entry);
    expect(originals).toHaveLength(20);
    const pyBefore = normalised(await pyicebergRows(namespace, table.name));
    const duckBefore = normalised(await duckdbRows((await catalog.loadTable(table)).metadataLocation!));
    expect(pyBefore).toHaveLength(60);
    expect(duckBefore).toEqual(pyBefore);

    const result = await rewriteDataFiles({ catalog, table, io, summary: { 'app.job': 'compact-1' } });
    expect(result.skipped).toBeUndefined();
    expect(result).toMatchObject({ attempts: 1, dataFilesBefore: 20, dataFilesAfter: 1 });
    expect(result.rewritten).toEqual({ files: 20, rows: 60n, bytes: originals.reduce((s, e) => s + e.dataFile.file_size_in_bytes, 0n) });
    expect(result.added.files).toBe(1);

    const loaded = await catalog.loadTable(table);
    expect(normalised(await pyicebergRows(namespace, table.name))).toEqual(pyBefore);
    expect(normalised(await duckdbRows(loaded.metadataLocation!))).toEqual(pyBefore);

    const head = branchHead(loaded.metadata)!;
    expect(head['snapshot-id']).toBe(result.snapshotId);
    expect(head['sequence-number']).toBe(21);
    expect(head.summary).toEqual({
      operation: 'replace',
      'app.job': 'compact-1',
      'added-data-files': '1',
      'deleted-data-files': '20',
      'added-records': '60',
      'deleted-records': '60',
      'added-files-size': String(result.added.bytes),
      'removed-files-size': String(result.rewritten.bytes),
      'changed-partition-count': '1',
      'total-data-files': '1',
      'total-records': '60',
      'total-files-size': String(result.added.bytes),
      'total-delete-files': '0',
      'total-position-deletes': '0',
      'total-equality-deletes': '0',
    });

    // The new files' manifest, and the 20 touched manifests rewritten as one.
    const list = readManifestList(await io.get(head['manifest-list']));
    expect(list).toHaveLength(2);
    expect(list[1]).toMatchObject({ added_files_count: 0, existing_files_count: 0, deleted_files_count: 20, added_snapshot_id: result.snapshotId });
    const all = await liveEntries(loaded.metadata);
    const added = all.filter((l) => l.entry.status === ENTRY_STATUS.ADDED);
    expect(added).toHaveLength(1);
    // The new file keeps the data sequence number of the snapshot the rewrite started from.
    expect(added[0]!.entry).toMatchObject({ snapshotId: result.snapshotId, sequenceNumber: 20n, fileSequenceNumber: 21n });
    expect(list[0]).toMatchObject({ added_files_count: 1, sequence_number: 21n, min_sequence_number: 20n, added_snapshot_id: result.snapshotId });
    const deleted = all.filter((l) => l.entry.status === ENTRY_STATUS.DELETED).map((l) => l.entry);
    expect(deleted).toHaveLength(20);
    expect(all.filter((l) => l.entry.status === ENTRY_STATUS.EXISTING)).toHaveLength(0);
    for (const original of originals) {
      const gone = deleted.find((e) => e.dataFile.file_path === original.dataFile.file_path);
      expect(gone).toMatchObject({ snapshotId: result.snapshotId, sequenceNumber: original.sequenceNumber, fileSequenceNumber: original.fileSequenceNumber });
    }

    // The new Parquet file carries exactly the table's field ids.
    const file = added[0]!.entry.dataFile;
    const footer = parquetMetadata(await io.get(file.file_path));
    const fileIds = footer.schema.map((e) => e.field_id).filter((id) => id !== undefined).sort((a, b) => a! - b!);
    expect(fileIds).toEqual([...indexById(schemaFromJson(loaded.metadata.schemas[0])).keys()].sort((a, b) => a - b));
    expect(Number(footer.num_rows)).toBe(60);

    // Metrics: counts summed over the originals, bounds the least and greatest of the rows.
    const metric = (name: string, id: number) => (file[name] as Array<{ key: number; value: unknown }>).find((m) => m.key === id)?.value;
    const sum = (name: string, id: number) =>
      originals.reduce((s, e) => s + ((e.dataFile[name] as Array<{ key: number; value: bigint }>).find((m) => m.key === id)?.value ?? 0n), 0n);
    for (const id of [1, 2, 3, 4, 5, 6, 13]) {
      expect(metric('value_counts', id)).toBe(60n);
      expect(metric('null_value_counts', id)).toBe(sum('null_value_counts', id));
    }
    const ids = Array.from({ length: 60 }, (_, i) => i + 1);
    expect(metric('null_value_counts', 2)).toBe(BigInt(ids.filter((id) => id % 4 === 0).length));
    const long = (v: unknown) => Buffer.from(v as Uint8Array).readBigInt64LE();
    expect(long(metric('lower_bounds', 1))).toBe(1n);
    expect(long(metric('upper_bounds', 1))).toBe(60n);
    const micros = (text: string) => BigInt(Date.parse(text.slice(0, 19) + text.slice(26))) * 1000n + BigInt(text.slice(20, 26));
    const tstz = ids.filter((id) => id % 5 !== 0).map((id) => micros(row(id).tstz as string));
    expect(long(metric('lower_bounds', 3))).toBe(tstz.reduce((a, b) => (a < b ? a : b)));
    expect(long(metric('upper_bounds', 3))).toBe(tstz.reduce((a, b) => (a > b ? a : b)));
    const days = ids.map((id) => Date.parse(row(id).dt as string) / 86_400_000);
    expect(Buffer.from(metric('lower_bounds', 6) as Uint8Array).readInt32LE()).toBe(Math.min(...days));
    expect(Buffer.from(metric('upper_bounds', 6) as Uint8Array).readInt32LE()).toBe(Math.max(...days));
    const unscaled = (v: unknown) => BigInt.asIntN(8 * (v as Uint8Array).length, BigInt(`0x${Buffer.from(v as Uint8Array).toString('hex')}`));
    expect(unscaled(metric('lower_bounds', 4))).toBe(-BigInt(`1${'9'.repeat(20)}0000000001`));
    expect(unscaled(metric('upper_bounds', 4))).toBe(BigInt(`59${'9'.repeat(20)}0000000059`));
    expect(metric('value_counts', 9)).toBeUndefined();
  });

  it('merges files of an older schema with newer ones, read through the current schema, their rows exact', async () => {
    const { table } = await newTable();
    await appendFiles(table, 6);
    const loaded = await catalog.loadTable(table);
    // Older files lack the column added here.
    await commitSchemaChange(catalog, table, loaded.metadata, { addColumns: [{ name: 'extra', type: 'string' }] });
    await appendFiles(table, 6, 100, (r) => ({ ...r, extra: `x${r['id'] as number}` }));
    const before = normalised(await pyicebergRows(namespace, table.name));
    expect(before).toHaveLength(36);
    expect(before.filter((r) => r['extra'] === null)).toHaveLength(18);

    const result = await rewriteDataFiles({ catalog, table, io, minInputFiles: 5 });
    expect(result).toMatchObject({ dataFilesBefore: 12, dataFilesAfter: 1, rewritten: { files: 12, rows: 36n } });
    expect(normalised(await pyicebergRows(namespace, table.name))).toEqual(before);
    const after = await catalog.loadTable(table);
    expect(normalised(await duckdbRows(after.metadataLocation!))).toEqual(before);
    const [added] = (await liveEntries(after.metadata)).filter((l) => l.entry.status === ENTRY_STATUS.ADDED);
    expect(parquetMetadata(await io.get(added!.entry.dataFile.file_path)).schema.map((e) => e.field_id)).toContain(after.metadata['last-column-id']);
  });

  it('rewrites files another engine wrote (64-bit offsets, uuid extension type) together with ours', async () => {
    const { table } = await newTable();
    await appendFiles(table, 3);
    // PyIceberg writes strings, lists and binaries with 64-bit offsets.
    await pyiceberg(
      table,
      [
        'import datetime, decimal, uuid',
        'utc = datetime.timezone.utc',
        'for f in range(3):',
        '    ids = range(100 + 3 * f, 103 + 3 * f)',
        '    rows = [{"id": i, "s": None if i % 2 else f"py {i} \u00e9", "tstz": datetime.datetime(2026, 5, 1, i % 24, 0, 0, i, tzinfo=utc),',
        '             "dec": decimal.Decimal(f"-{i}.0000000001"), "u": uuid.UUID(int=i).bytes, "dt": datetime.date(2024, 2, 29),',
        '             "st": {"a": i, "tags": ["x", None]}, "li": [i, -i], "__ingest_ts": datetime.datetime(2026, 5, 2, tzinfo=utc)} for i in ids]',
        '    t.append(pa.Table.from_pylist(rows, schema=t.schema().as_arrow()))',
      ].join('\n'),
    );
    const before = normalised(await pyicebergRows(namespace, table.name));
    expect(before).toHaveLength(18);
    expect(before.find((r) => r['id'] === 101)).toMatchObject({ s: null, dec: '-101.0000000001', u: '00000000-0000-0000-0000-000000000065', li: [101, -101] });

    const result = await rewriteDataFiles({ catalog, table, io });
    expect(result).toMatchObject({ dataFilesBefore: 6, dataFilesAfter: 1, rewritten: { files: 6, rows: 18n } });
    expect(normalised(await pyicebergRows(namespace, table.name))).toEqual(before);
    expect(normalised(await duckdbRows((await catalog.loadTable(table)).metadataLocation!))).toEqual(before);
  });

  it('retries on the new head when another engine appended meanwhile, keeping both sides once', async () => {
    const { table } = await newTable();
    await appendFiles(table, 6);
    const before = normalised(await pyicebergRows(namespace, table.name));
    const rival = besideRival(table, io, 't.append(pa.Table.from_pylist([{"id": 1000}], schema=t.schema().as_arrow()))');
    const result = await rival.rewrite;
    expect(result.attempts).toBe(2);
    expect(rival.calls()).toBe(2);
    expect(result).toMatchObject({ dataFilesBefore: 7, dataFilesAfter: 2 });
    const rows = normalised(await pyicebergRows(namespace, table.name));
    expect(rows.map((r) => Number(r['id']))).toEqual([...before.map((r) => Number(r['id'])), 1000]);
    expect(rows.slice(0, -1)).toEqual(before);
    const head = branchHead(result.metadata)!;
    expect(head.summary).toMatchObject({ operation: 'replace', 'total-data-files': '2', 'total-records': '19', 'deleted-data-files': '6' });
  });

  it.each([
    ['deletes a whole file', 'id <= 3', [1, 2, 3]],
    ['rewrites part of a file', 'id == 5', [5]],
  ])('fails cleanly when another engine %s meanwhile, losing and reviving nothing', async (_, predicate, removedIds) => {
    const { table } = await newTable();
    await appendFiles(table, 6);
    const before = normalised(await pyicebergRows(namespace, table.name));
    const recorder = recording(io);
    const rival = besideRival(table, recorder, `t.delete(${JSON.stringify(predicate)})`);
    const error = await rival.rewrite.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(IcebergError);
    expect((error as IcebergError).kind).toBe('validation_failed');
    expect(rival.calls()).toBe(1);
    const rows = normalised(await pyicebergRows(namespace, table.name));
    expect(rows).toEqual(before.filter((r) => !removedIds.includes(Number(r['id']))));
    expect(branchHead((await catalog.loadTable(table)).metadata)?.summary.operation).not.toBe('replace');
    // Everything the rewrite wrote (data file, manifests, lists) is gone again.
    expect(recorder.puts.some((l) => l.endsWith('.parquet'))).toBe(true);
    expect(recorder.puts.length).toBeGreaterThanOrEqual(4);
    for (const location of recorder.puts) expect(await io.exists(location)).toBe(false);
  });

  it('commits once when the answer to a landed commit is lost (502 after forwarding)', async () => {
    const { table } = await newTable();
    await appendFiles(table, 5);
    const before = normalised(await pyicebergRows(namespace, table.name));
    const proxy = await startFaultyProxy(catalogOptions().uri, { dropAnswers: 1, forward: true });
    try {
      const flaky = await RestCatalog.connect({ ...catalogOptions(), uri: proxy.uri });
      const result = await rewriteDataFiles({ catalog: flaky, table, io, retry: fastRetry });
      expect(result).toMatchObject({ attempts: 1, dataFilesAfter: 1 });
      expect(proxy.stats).toEqual({ commitsForwarded: 1, answersDropped: 1 });
      expect(branchHead(result.metadata)?.['snapshot-id']).toBe(result.snapshotId);
    } finally {
      await proxy.close();
    }
    expect(normalised(await pyicebergRows(namespace, table.name))).toEqual(before);
  });

  it('writes the files of an older spec again under the current one, split into a file per partition', async () => {
    const partitioned = await newTable();
    await appendFiles(partitioned.table, 6);
    await pyiceberg(partitioned.table, 'with t.update_spec() as u:\n    u.add_identity("dt")');
    const rowsBefore = normalised(await pyicebergRows(namespace, partitioned.table.name));
    const result = await rewriteDataFiles({ catalog, table: partitioned.table, io });
    // 18 rows, each of its own dt: the 6 unpartitioned files become 18 of one partition each.
    expect(result).toMatchObject({ attempts: 1, dataFilesBefore: 6, dataFilesAfter: 18, rewritten: { files: 6, rows: 18n }, added: { files: 18 } });
    const loaded = await catalog.loadTable(partitioned.table);
    expect(normalised(await pyicebergRows(namespace, partitioned.table.name))).toEqual(rowsBefore);
    expect(normalised(await duckdbRows(loaded.metadataLocation!))).toEqual(rowsBefore);
    const head = branchHead(loaded.metadata)!;
    expect(head.summary['changed-partition-count']).toBe('19');
    const specId = loaded.metadata['default-spec-id'];
    const live = (await liveEntries(loaded.metadata)).filter((l) => l.entry.status !== ENTRY_STATUS.DELETED);
    expect(live.map((l) => l.entry.dataFile.file_path.split('/').at(-2)).sort()).toEqual(rowsBefore.map((r) => `dt=${r['dt']}`).sort());
    // The new spec's manifests carry partition summaries, so readers skip them by dt.
    for (const manifest of readManifestList(await io.get(head['manifest-list'])).filter((m) => m.partition_spec_id === specId)) {
      expect(manifest.partitions).toHaveLength(1);
      expect(manifest.partitions![0]!.lower_bound).not.toBeNull();
    }
  });

  it('skips a table of too few small files', async () => {
    const few = await newTable();
    await appendFiles(few.table, 4);
    expect(await rewriteDataFiles({ catalog, table: few.table, io })).toMatchObject({ snapshotId: null, skipped: 'too_few_files' });
    // Files at or above the target are not small.
    await appendFiles(few.table, 2, 100);
    expect(await rewriteDataFiles({ catalog, table: few.table, io, targetFileSizeBytes: 1000 })).toMatchObject({ skipped: 'too_few_files' });
    expect(await rewriteDataFiles({ catalog, table: few.table, io })).toMatchObject({ dataFilesBefore: 6, dataFilesAfter: 1 });
  });

  /**
   * Each row's lineage as a v3 reader sees it (spec "Row Lineage"), by its id: the file's own
   * `_row_id` / `_last_updated_sequence_number` where not null, else the data file's
   * first_row_id plus the row's position and the entry's data sequence number.
   */
  async function lineageById(metadata: TableMetadata): Promise<Map<number, [bigint, bigint]>> {
    const byId = new Map<number, [bigint, bigint]>();
    for (const { entry } of await liveEntries(metadata)) {
      if (entry.status === ENTRY_STATUS.DELETED) continue;
      const bytes = await io.get(entry.dataFile.file_path);
      const ids = parquetArrowSchema(bytes).fields.map((f) => f.metadata.get('PARQUET:field_id'));
      const column = (id: number) => ids.indexOf(String(id));
      let position = 0n;
      for (const group of readParquetRowGroups(bytes)) {
        for (const batch of group) {
          for (let i = 0; i < batch.numRows; i++, position++) {
            const own = (id: number) => (column(id) < 0 ? null : (batch.getChildAt(column(id))!.get(i) as bigint | null));
            const rowId = own(2147483540) ?? (entry.dataFile.first_row_id as bigint) + position;
            byId.set(Number(batch.getChildAt(column(1))!.get(i)), [rowId, own(2147483539) ?? entry.sequenceNumber!]);
          }
        }
      }
    }
    return byId;
  }

  it('compacts a format v3 table, every row keeping its _row_id and _last_updated_sequence_number, written into the new file', async () => {
    const v3 = await newTable({ 'format-version': '3' });
    const before = await appendFiles(v3.table, 6);
    expect(before['format-version']).toBe(3);
    const lineage = await lineageById(before);
    expect([...lineage.values()].map(([rowId]) => rowId).sort((a, b) => Number(a - b))).toEqual(Array.from({ length: 18 }, (_, i) => BigInt(i)));
    const rows = normalised(await pyicebergRows(namespace, v3.table.name));

    const result = await rewriteDataFiles({ catalog, table: v3.table, io });
    expect(result).toMatchObject({ attempts: 1, dataFilesBefore: 6, dataFilesAfter: 1 });
    const after = (await catalog.loadTable(v3.table)).metadata;
    const head = branchHead(after)!;
    // A replace takes row ids for its new manifests as any snapshot (Java's manifest list
    // writer): the new file's 18 rows; the rewritten manifest lists no existing file.
    expect(head['first-row-id']).toBe(before['next-row-id']);
    expect(head['added-rows']).toBe(18);
    expect(after['next-row-id']).toBe(Number(before['next-row-id']) + 18);
    const [file] = (await liveEntries(after)).filter((l) => l.entry.status !== ENTRY_STATUS.DELETED);
    const fields = parquetArrowSchema(await io.get(file!.entry.dataFile.file_path)).fields;
    expect(fields.slice(-2).map((f) => [f.name, f.metadata.get('PARQUET:field_id'), f.nullable])).toEqual([
      ['_row_id', '2147483540', true],
      ['_last_updated_sequence_number', '2147483539', true],
    ]);
    expect(await lineageById(after)).toEqual(lineage);
    expect(normalised(await pyicebergRows(namespace, v3.table.name))).toEqual(rows);
    expect(normalised(await duckdbRows((await catalog.loadTable(v3.table)).metadataLocation!))).toEqual(rows);

    // Again with the compacted file among the small ones: its rows keep the ids it holds.
    await appendFiles(v3.table, 5, 19);
    const grown = await lineageById((await catalog.loadTable(v3.table)).metadata);
    expect(grown.size).toBe(33);
    expect(await rewriteDataFiles({ catalog, table: v3.table, io })).toMatchObject({ dataFilesBefore: 6, dataFilesAfter: 1 });
    expect(await lineageById((await catalog.loadTable(v3.table)).metadata)).toEqual(grown);
    expect(normalised(await pyicebergRows(namespace, v3.table.name))).toHaveLength(33);
  });

  describe('across schema versions (each file read through the current schema by field id)', () => {
    const evolving = {
      type: 'struct' as const,
      fields: [
        { id: 1, name: 'id', required: true, type: 'long' },
        { id: 2, name: 'n', required: false, type: 'int' },
        { id: 3, name: 'f', required: false, type: 'float' },
        { id: 4, name: 'dec', required: false, type: 'decimal(10, 2)' },
        { id: 5, name: 's', required: false, type: 'string' },
        { id: 6, name: 'gone', required: false, type: 'string' },
        { id: 7, name: 'st', required: false, type: { type: 'struct', fields: [{ id: 8, name: 'a', required: false, type: 'int' }] } },
      ],
    } as unknown as typeof schema;
    const first = (id: number) => ({ id, n: id % 4 === 0 ? null : id * 1000, f: id + 0.5, dec: `${id}.25`, s: `s${id}`, gone: `g${id}`, st: { a: id } });
    /** The owner's changes with PyIceberg: a top-level and a nested column added. */
    const addColumns = 'from pyiceberg.types import *\nwith t.update_schema() as u:\n    u.add_column("extra", StringType())\n    u.add_column(("st", "b"), StringType())';
    /** Then a rename, three promotions and a drop. */
    const reshape = [
      'from pyiceberg.types import *',
      'with t.update_schema() as u:',
      '    u.rename_column("s", "label")',
      '    u.update_column("n", LongType())',
      '    u.update_column("f", DoubleType())',
      '    u.update_column("dec", DecimalType(20, 2))',
      '    u.delete_column("gone")',
    ].join('\n');

    /** Two files under each of three schemas: 18 rows. */
    async function threeSchemas(table: TableIdent): Promise<void> {
      await appendFiles(table, 2, 1, (r) => first(r['id'] as number));
      await pyiceberg(table, addColumns);
      await appendFiles(table, 2, 7, (r) => ({ ...first(r['id'] as number), extra: `x${r['id']}`, st: { a: r['id'], b: `b${r['id']}` } }));
      await pyiceberg(table, reshape);
      await appendFiles(table, 2, 13, (r) => {
        const id = r['id'] as number;
        return { id, n: 2 ** 40 + id, f: id + 0.1, dec: `12345678901234${id}.75`, label: `l${id}`, extra: `x${id}`, st: { a: id, b: `b${id}` } };
      });
    }

    it('writes one file of the current schema: missing columns null, dropped left out, renamed by id, int, float and decimal widened, v3 lineage kept', async () => {
      const { table } = await newTable({ 'format-version': '3' }, evolving);
      await threeSchemas(table);
      const loaded = (await catalog.loadTable(table)).metadata;
      expect(loaded.schemas).toHaveLength(3);
      const lineage = await lineageById(loaded);
      const before = normalised(await pyicebergRows(namespace, table.name));
      expect(before).toHaveLength(18);
      // What every reader must see, old rows included: by the rules, not only as PyIceberg had it.
      expect(before[0]).toEqual({ id: 1, n: 1000, f: 1.5, dec: '1.25', label: 's1', st: { a: 1, b: null }, extra: null });
      expect(before[3]).toMatchObject({ id: 4, n: null });
      expect(before[6]).toEqual({ id: 7, n: 7000, f: 7.5, dec: '7.25', label: 's7', st: { a: 7, b: 'b7' }, extra: 'x7' });
      expect(before[12]).toEqual({ id: 13, n: 2 ** 40 + 13, f: 13.1, dec: '1234567890123413.75', label: 'l13', st: { a: 13, b: 'b13' }, extra: 'x13' });

      const result = await rewriteDataFiles({ catalog, table, io });
      expect(result).toMatchObject({ attempts: 1, dataFilesBefore: 6, dataFilesAfter: 1, rewritten: { files: 6, rows: 18n } });
      const after = await catalog.loadTable(table);
      expect(normalised(await pyicebergRows(namespace, table.name))).toEqual(before);
      expect(normalised(await duckdbRows(after.metadataLocation!))).toEqual(before);
      expect(await lineageById(after.metadata)).toEqual(lineage);
      // Written under the current schema: its names and types, no dropped column.
      const [file] = (await liveEntries(after.metadata)).filter((l) => l.entry.status !== ENTRY_STATUS.DELETED);
      const fields = parquetArrowSchema(await io.get(file!.entry.dataFile.file_path)).fields;
      expect(fields.map((f) => [f.name, f.metadata.get('PARQUET:field_id'), String(f.type)])).toEqual([
        ['id', '1', 'Int64'],
        ['n', '2', 'Int64'],
        ['f', '3', 'Float64'],
        ['dec', '4', 'Decimal[20e+2]'],
        ['label', '5', 'Utf8'],
        ['st', '7', 'Struct<{a:Int32, b:Utf8}>'],
        ['extra', '9', 'Utf8'],
        ['_row_id', '2147483540', 'Int64'],
        ['_last_updated_sequence_number', '2147483539', 'Int64'],
      ]);
    });

    it('leaves out a file whose column cannot be read under the current schema, and rewrites the others', async () => {
      const { table } = await newTable({}, evolving);
      let metadata = await appendFiles(table, 5, 1, (r) => first(r['id'] as number));
      // Field 2 written as a string: no Iceberg rule reads it as an int.
      const odd = { ...metadata, schemas: metadata.schemas.map((s) => ({ ...s, fields: s.fields.map((f) => (f.id === 2 ? { ...f, type: 'string' } : f)) })) };
      const oddFile = await jsonRowsToDataFile(io, odd, [json({ ...first(100), n: 'not an int' })]);
      metadata = (await appendDataFiles({ catalog, table, io, dataFiles: [oddFile] })).metadata;

      const result = await rewriteDataFiles({ catalog, table, io });
      expect(result).toMatchObject({ dataFilesBefore: 6, dataFilesAfter: 2, rewritten: { files: 5, rows: 15n } });
      const live = (await liveEntries(result.metadata)).filter((l) => l.entry.status !== ENTRY_STATUS.DELETED).map((l) => l.entry.dataFile.file_path);
      expect(live).toContain(oddFile.filePath);
    });

    it("plans again under the newer schema when an owner's schema change wins the race (409), deleting what it wrote first", async () => {
      const { table } = await newTable({ 'format-version': '3' }, evolving);
      await appendFiles(table, 5, 1, (r) => first(r['id'] as number));
      const recorder = recording(io);
      const rival = besideRival(table, recorder, reshape);
      const result = await rival.rewrite;
      expect(result).toMatchObject({ attempts: 2, dataFilesBefore: 5, dataFilesAfter: 1, rewritten: { files: 5, rows: 15n } });
      expect(rival.calls()).toBe(2);
      const after = await catalog.loadTable(table);
      const [file] = (await liveEntries(after.metadata)).filter((l) => l.entry.status !== ENTRY_STATUS.DELETED);
      const names = parquetArrowSchema(await io.get(file!.entry.dataFile.file_path)).fields.map((f) => f.name);
      expect(names).toEqual(['id', 'n', 'f', 'dec', 'label', 'st', '_row_id', '_last_updated_sequence_number']);
      // The first plan's file, written under the older schema, is gone; the second one is the live file.
      const parquets = recorder.puts.filter((l) => l.endsWith('.parquet'));
      expect(parquets).toHaveLength(2);
      expect(await io.exists(parquets[0]!)).toBe(false);
      expect(parquets[1]).toBe(file!.entry.dataFile.file_path);
      const rows = normalised(await pyicebergRows(namespace, table.name));
      expect(rows).toHaveLength(15);
      expect(rows[0]).toEqual({ id: 1, n: 1000, f: 1.5, dec: '1.25', label: 's1', st: { a: 1 } });
      expect(normalised(await duckdbRows(after.metadataLocation!))).toEqual(rows);
    });
  });
});
