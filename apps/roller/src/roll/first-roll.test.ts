import type { TableMetadata } from '@tablemere/iceberg';
import { describe, expect, it } from 'vitest';
import { firstRollChange } from './first-roll.ts';

const metadata = (fields: string[], properties: Record<string, string>, specFields: object[] = []) =>
  ({
    'current-schema-id': 0,
    'default-spec-id': 0,
    'partition-specs': [{ 'spec-id': 0, fields: specFields }],
    schemas: [{ 'schema-id': 0, type: 'struct', fields: fields.map((name, i) => ({ id: i + 1, name, required: false, type: name === '__ingest_ts' ? 'timestamptz' : 'long' })) }],
    properties,
  }) as unknown as TableMetadata;

const RETENTION = { 'write.metadata.delete-after-commit.enabled': 'true', 'write.metadata.previous-versions-max': '5' };

describe('firstRollChange', () => {
  it('adds the column and both metadata-retention properties to a plain table', () => {
    expect(firstRollChange(metadata(['x'], {}))).toEqual({
      addColumns: [{ name: '__ingest_ts', type: 'timestamptz', doc: 'when the intake received the row' }],
      setProperties: RETENTION,
    });
  });

  it("never overwrites a property the owner set, whatever its value; sets only the missing one", () => {
    const owner = { 'write.metadata.delete-after-commit.enabled': 'false', 'write.metadata.previous-versions-max': '50' };
    expect(firstRollChange(metadata(['x', '__ingest_ts'], owner))).toBeUndefined();
    expect(firstRollChange(metadata(['x'], owner))).toEqual({ addColumns: [expect.objectContaining({ name: '__ingest_ts' })] });
    expect(firstRollChange(metadata(['x', '__ingest_ts'], { 'write.metadata.previous-versions-max': '50' }))).toEqual({
      setProperties: { 'write.metadata.delete-after-commit.enabled': 'true' },
    });
  });

  it("adds the sink's partition to an unpartitioned table with the column, and never replaces the owner's spec", () => {
    expect(firstRollChange(metadata(['x'], {}), ['day(__ingest_ts)', 'bucket[4](x)'])).toMatchObject({
      addColumns: [expect.objectContaining({ name: '__ingest_ts' })],
      partitionBy: [
        { transform: { kind: 'day' }, source: '__ingest_ts' },
        { transform: { kind: 'bucket', n: 4 }, source: 'x' },
      ],
    });
    expect(firstRollChange(metadata(['x', '__ingest_ts'], RETENTION), ['identity(x)'])).toEqual({ partitionBy: [{ transform: { kind: 'identity' }, source: 'x' }] });
    const owners = [{ 'source-id': 1, 'field-id': 1000, name: 'x', transform: 'identity' }];
    expect(firstRollChange(metadata(['x', '__ingest_ts'], RETENTION, owners), ['day(__ingest_ts)'])).toBeUndefined();
  });
});
