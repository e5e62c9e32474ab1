import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isIcebergError } from '../errors.ts';
import { schemaFromJson, schemaToJson } from '../spec/schema.ts';
import { readAvroFile } from './avro.ts';
import { ENTRY_STATUS, readManifest, readManifestEntries, writeManifest, writeManifestEntries } from './manifest.ts';

const SCHEMA_JSON = {
  type: 'struct',
  'schema-id': 3,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'tags', required: false, type: { type: 'list', 'element-id': 3, element: 'string', 'element-required': false } },
  ],
  'identifier-field-ids': [],
} as const;

const SNAPSHOT_ID = 8333333333333333333n;

function manifest(): Uint8Array {
  return writeManifest({
    schema: structuredClone(SCHEMA_JSON) as never,
    partitionSpec: { 'spec-id': 0, fields: [] },
    snapshotId: SNAPSHOT_ID,
    dataFiles: [
      {
        filePath: 's3://warehouse/ns/t/data/a.parquet',
        fileSizeInBytes: 9007199254740993n,
        recordCount: 2,
        metrics: {
          columnSizes: new Map([[1, 40n]]),
          valueCounts: new Map([[1, 2n], [2, 2n]]),
          nullValueCounts: new Map([[2, 1n], [1, 0n]]),
          lowerBounds: new Map([[1, new Uint8Array([1, 0, 0, 0, 0, 0, 0, 0])]]),
          upperBounds: new Map([[1, new Uint8Array([2, 0, 0, 0, 0, 0, 0, 0])]]),
          splitOffsets: [4n],
        },
      },
      { filePath: 's3://warehouse/ns/t/data/b.parquet', fileSizeInBytes: 10, recordCount: 1n },
    ],
  });
}

describe('writeManifest', () => {
  it('writes the v2 file metadata readers look for', () => {
    const { metadata } = readManifest(manifest());
    expect(metadata).toMatchObject({
      'schema-id': '3',
      'partition-spec': '[]',
      'partition-spec-id': '0',
      'format-version': '2',
      content: 'data',
    });
    expect(JSON.parse(metadata.schema!)).toEqual(schemaToJson(schemaFromJson(SCHEMA_JSON)));
    const avroSchema = JSON.parse(metadata['avro.schema']!) as { name: string; fields: Array<Record<string, unknown>> };
    expect(avroSchema.name).toBe('manifest_entry');
    expect(avroSchema.fields.map((f) => [f.name, f['field-id']])).toEqual([
      ['status', 0],
      ['snapshot_id', 1],
      ['sequence_number', 3],
      ['file_sequence_number', 4],
      ['data_file', 2],
    ]);
    expect(metadata['avro.schema']).toContain('"element-id":133');
    expect(metadata['avro.schema']).toContain('"logicalType":"map"');
  });

  it('lists every file as added, with exact longs, null sequence numbers and sorted metrics', () => {
    const { entries } = readManifest(manifest());
    expect(entries).toHaveLength(2);
    const first = entries[0] as Record<string, any>;
    expect(first.status).toBe(1);
    expect(first.snapshot_id).toBe(SNAPSHOT_ID);
    expect(first.sequence_number).toBeNull();
    expect(first.file_sequence_number).toBeNull();
    const file = first.data_file;
    expect(file.content).toBe(0);
    expect(file.file_path).toBe('s3://warehouse/ns/t/data/a.parquet');
    expect(file.file_format).toBe('PARQUET');
    expect(file.file_size_in_bytes).toBe(9007199254740993n);
    expect(file.record_count).toBe(2n);
    expect(file.null_value_counts.map((e: any) => [e.key, e.value])).toEqual([[1, 0n], [2, 1n]]);
    expect([...file.lower_bounds[0].value]).toEqual([1, 0, 0, 0, 0, 0, 0, 0]);
    expect(file.split_offsets).toEqual([4n]);
    const second = (entries[1] as Record<string, any>).data_file;
    expect(second.value_counts).toBeNull();
    expect(second.record_count).toBe(1n);
  });

  it('is readable by the same decoder that reads PyIceberg manifests', () => {
    const ours = readAvroFile(manifest());
    const theirs = readAvroFile(new Uint8Array(readFileSync(new URL('./fixtures/pyiceberg-manifest.avro', import.meta.url))));
    const names = (schema: unknown): unknown => JSON.parse(JSON.stringify(schema, (k, v) => (k === 'doc' ? undefined : v)));
    const ourFields = (names(ours.schema) as any).fields[4].type.fields.map((f: any) => [f.name, f['field-id']]);
    const theirFields = (names(theirs.schema) as any).fields[4].type.fields.map((f: any) => [f.name, f['field-id']]);
    expect(ourFields).toEqual(theirFields);
  });

  it('writes the partition record of a partitioned spec with its field ids and value types', () => {
    const bytes = writeManifest({
      schema: schemaFromJson(SCHEMA_JSON),
      partitionSpec: { 'spec-id': 1, fields: [{ 'source-id': 1, 'field-id': 1000, name: 'id_bucket', transform: 'bucket[4]' }] },
      snapshotId: 1n,
      dataFiles: [{ filePath: 's3://w/t/data/id_bucket=2/a.parquet', fileSizeInBytes: 1, recordCount: 1, partition: { id_bucket: 2 } }],
    });
    const file = readAvroFile(bytes);
    const dataFile = (file.schema as { fields: Array<{ name: string; type: { fields: Array<{ name: string; type: { fields?: unknown[] } }> } }> }).fields.find((f) => f.name === 'data_file')!;
    const partition = dataFile.type.fields.find((f) => f.name === 'partition')!;
    expect(partition.type.fields).toEqual([{ name: 'id_bucket', type: ['null', 'int'], default: null, 'field-id': 1000 }]);
    expect(file.metadata['partition-spec']).toBe(JSON.stringify([{ 'source-id': 1, 'field-id': 1000, name: 'id_bucket', transform: 'bucket[4]' }]));
    expect(readManifestEntries(bytes)[0]?.dataFile.partition).toEqual({ id_bucket: 2 });
  });

  it('refuses transforms it does not know and other format versions', () => {
    const base = { schema: schemaFromJson(SCHEMA_JSON), snapshotId: 1n, dataFiles: [] };
    const unknown = () => writeManifest({ ...base, partitionSpec: { 'spec-id': 1, fields: [{ 'source-id': 1, 'field-id': 1000, name: 'z', transform: 'zorder' }] } });
    expect(unknown).toThrow(/zorder/);
    try {
      unknown();
    } catch (error) {
      expect(isIcebergError(error, 'unsupported')).toBe(true);
    }
    expect(() => writeManifest({ ...base, partitionSpec: { 'spec-id': 0, fields: [] }, formatVersion: 1 })).toThrow(/version 1/);
  });
});

describe('readManifestEntries and writeManifestEntries', () => {
  const listEntry = { added_snapshot_id: SNAPSHOT_ID, sequence_number: 7n };

  it('applies inheritance from the manifest list entry', () => {
    const entries = readManifestEntries(manifest(), listEntry);
    expect(entries.map((e) => [e.status, e.snapshotId, e.sequenceNumber, e.fileSequenceNumber])).toEqual([
      [ENTRY_STATUS.ADDED, SNAPSHOT_ID, 7n, 7n],
      [ENTRY_STATUS.ADDED, SNAPSHOT_ID, 7n, 7n],
    ]);
    // Without the list entry nothing is made up.
    expect(readManifestEntries(manifest())[0]!.sequenceNumber).toBeNull();
  });

  it('carries entries into a new manifest unchanged but for status', () => {
    const carried = readManifestEntries(manifest(), listEntry).map((e, i) => ({ ...e, status: i === 0 ? ENTRY_STATUS.EXISTING : ENTRY_STATUS.DELETED }));
    const bytes = writeManifestEntries({ schema: schemaFromJson(SCHEMA_JSON), partitionSpec: { 'spec-id': 0, fields: [] }, entries: carried });
    const back = readManifestEntries(bytes);
    expect(back.map((e) => [e.status, e.snapshotId, e.sequenceNumber, e.fileSequenceNumber])).toEqual([
      [ENTRY_STATUS.EXISTING, SNAPSHOT_ID, 7n, 7n],
      [ENTRY_STATUS.DELETED, SNAPSHOT_ID, 7n, 7n],
    ]);
    expect(back[0]!.dataFile).toEqual(carried[0]!.dataFile);
    expect(back[0]!.dataFile.file_size_in_bytes).toBe(9007199254740993n);
  });

  it("rewrites another writer's entries in our schema", () => {
    const theirs = readManifestEntries(new Uint8Array(readFileSync(new URL('./fixtures/pyiceberg-manifest.avro', import.meta.url))), listEntry);
    expect(theirs.length).toBeGreaterThan(0);
    const { metadata } = readManifest(new Uint8Array(readFileSync(new URL('./fixtures/pyiceberg-manifest.avro', import.meta.url))));
    const schema = schemaFromJson(JSON.parse(metadata.schema!));
    const back = readManifestEntries(writeManifestEntries({ schema, partitionSpec: { 'spec-id': 0, fields: [] }, entries: theirs }));
    expect(back.map((e) => e.dataFile.file_path)).toEqual(theirs.map((e) => e.dataFile.file_path));
    expect(back.map((e) => e.dataFile.lower_bounds)).toEqual(theirs.map((e) => e.dataFile.lower_bounds));
    expect(back.map((e) => e.snapshotId)).toEqual(theirs.map((e) => e.snapshotId));
  });
});
