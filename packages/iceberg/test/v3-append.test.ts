import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendDataFiles, branchHead, readManifestEntries, readManifestList, type RestCatalog, type S3FileIO, type TableIdent } from '../src/index.ts';
import { duckdbRows, pyicebergRows } from './readers.ts';
import { closeTestNamespace, jsonRowsToDataFile, openTestNamespace, uniqueName } from './support.ts';

/**
 * Appends to a format v3 table keep row lineage: each snapshot's first-row-id is the table's
 * next-row-id, manifests get first row ids, files inherit theirs, and the table's next-row-id
 * advances past every id given out, also across merged manifests.
 */
describe('appends to a format v3 table', () => {
  const namespace = uniqueName('it_v3');
  let catalog: RestCatalog;
  let io: S3FileIO;
  const ident: TableIdent = { namespace: [namespace], name: 'lineage' };
  const schema = { type: 'struct' as const, fields: [{ id: 1, name: 'id', required: true, type: 'long' }] };

  beforeAll(async () => {
    ({ catalog, io } = await openTestNamespace(namespace));
    await catalog.createTable(namespace, ident.name, { schema, properties: { 'format-version': '3', 'commit.manifest.min-count-to-merge': '3' } });
  });

  afterAll(async () => {
    await closeTestNamespace({ catalog, io }, namespace);
  });

  it('gives every row an id once, and advances next-row-id', async () => {
    const rowsPerAppend = [3, 2, 4, 1];
    let next = 0;
    for (const [n, count] of rowsPerAppend.entries()) {
      const { metadata } = await catalog.loadTable(ident);
      expect(metadata['format-version']).toBe(3);
      expect(BigInt(metadata['next-row-id'] as number | bigint)).toBe(BigInt(next));
      const ids = Array.from({ length: count }, (_, i) => 100 * n + i);
      const file = await jsonRowsToDataFile(io, metadata, ids.map((id) => JSON.stringify({ id })));
      const result = await appendDataFiles({ catalog, table: ident, io, dataFiles: [file] });
      const head = branchHead(result.metadata)!;
      expect(BigInt(head['first-row-id'] as number | bigint)).toBe(BigInt(next));
      // added-rows bounds the ids given out: this append's rows plus rows of merged-in manifests.
      next += Number(head['added-rows']);
      expect(Number(head['added-rows'])).toBeGreaterThanOrEqual(count);
    }
    const { metadata, metadataLocation } = await catalog.loadTable(ident);
    expect(BigInt(metadata['next-row-id'] as number | bigint)).toBe(BigInt(next));

    // Every live file has a first row id (inherited or explicit), and the id ranges never overlap.
    const manifests = readManifestList(await io.get(branchHead(metadata)!['manifest-list']));
    expect(manifests.every((m) => m.first_row_id !== null)).toBe(true);
    const ranges = (await Promise.all(manifests.map(async (m) => readManifestEntries(await io.get(m.manifest_path), m))))
      .flat()
      .map((e) => [Number(e.dataFile.first_row_id), Number(e.dataFile.first_row_id) + Number(e.dataFile.record_count)] as const)
      .sort((a, b) => a[0] - b[0]);
    expect(ranges).toHaveLength(rowsPerAppend.length);
    for (let i = 1; i < ranges.length; i++) expect(ranges[i]![0]).toBeGreaterThanOrEqual(ranges[i - 1]![1]);
    expect(ranges.at(-1)![1]).toBeLessThanOrEqual(next);

    const expected = rowsPerAppend.flatMap((count, n) => Array.from({ length: count }, (_, i) => 100 * n + i));
    const ids = (rows: Array<Record<string, unknown>>) => rows.map((r) => Number(r.id)).sort((a, b) => a - b);
    expect(ids(await pyicebergRows(namespace, ident.name))).toEqual(expected);
    expect(ids(await duckdbRows(metadataLocation!))).toEqual(expected);
  });
});
