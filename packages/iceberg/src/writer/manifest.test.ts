import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isIcebergError } from '../errors.ts';
import { schemaFromJson, schemaToJson } from '../spec/schema.ts';
import { readAvroFile } from './avro.ts';
import { readManifest, writeManifest } from './manifest.ts';

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

  it('refuses partitioned specs and other format versions', () => {
    const base = { schema: schemaFromJson(SCHEMA_JSON), snapshotId: 1n, dataFiles: [] };
    const partitioned = () => writeManifest({ ...base, partitionSpec: { 'spec-id': 1, fields: [{ 'source-id': 1, 'field-id': 1000, name: 'b', transform: 'bucket[4]' }] } });
    expect(partitioned).toThrow(/partitioned/);
    try {
      partitioned();
    } catch (error) {
      expect(isIcebergError(error, 'unsupported')).toBe(true);
    }
    expect(() => writeManifest({ ...base, partitionSpec: { 'spec-id': 0, fields: [] }, formatVersion: 1 })).toThrow(/version 1/);
  });
});
