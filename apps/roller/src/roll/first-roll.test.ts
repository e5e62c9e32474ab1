import type { TableMetadata } from '@tablemere/iceberg';
import { describe, expect, it } from 'vitest';
import { firstRollChange } from './first-roll.ts';

const metadata = (fields: string[], properties: Record<string, string>) =>
  ({
    'current-schema-id': 0,
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
});
