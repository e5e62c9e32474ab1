import { IcebergError } from '../errors.ts';
import type { PartitionSpec, SchemaJson } from '../spec/metadata.ts';
import { type Schema, schemaFromJson, schemaToJson } from '../spec/schema.ts';
import { type AvroCodec, readAvroFile, writeAvroFile } from './avro.ts';
import type { DataFile, DataFileMetrics } from './data-file.ts';
import { MANIFEST_ENTRY_V2_SCHEMA } from './manifest-schemas.ts';

/** Entry status: 0 existing, 1 added, 2 deleted. */
const STATUS_ADDED = 1;
const CONTENT_DATA = 0;

export interface WriteManifestOptions {
  /** The table schema the files were written with (model or REST JSON). */
  schema: Schema | SchemaJson;
  partitionSpec: Pick<PartitionSpec, 'spec-id' | 'fields'>;
  /** Only 2 is written. */
  formatVersion?: number;
  /** The snapshot that adds these files. */
  snapshotId: bigint;
  dataFiles: readonly DataFile[];
  codec?: AvroCodec;
}

/**
 * A format v2 data manifest listing `dataFiles` as added by `snapshotId`. Sequence numbers
 * are left null: the files inherit the snapshot's when the commit assigns it.
 */
export function writeManifest(options: WriteManifestOptions): Uint8Array {
  const formatVersion = options.formatVersion ?? 2;
  if (formatVersion !== 2) {
    throw new IcebergError('unsupported', `manifests of format version ${formatVersion} are not written; only version 2`);
  }
  if (options.partitionSpec.fields.length > 0) {
    throw new IcebergError('unsupported', 'partitioned tables are not supported: the partition spec must have no fields');
  }
  const schema = 'schemaId' in options.schema ? options.schema : schemaFromJson(options.schema);
  return writeAvroFile(MANIFEST_ENTRY_V2_SCHEMA, options.dataFiles.map((file) => entryRecord(file, options.snapshotId)), {
    codec: options.codec,
    metadata: {
      schema: JSON.stringify(schemaToJson(schema)),
      'schema-id': String(schema.schemaId),
      'partition-spec': JSON.stringify(options.partitionSpec.fields),
      'partition-spec-id': String(options.partitionSpec['spec-id']),
      'format-version': '2',
      content: 'data',
    },
  });
}

/** The entries of a manifest as avsc decodes them (longs as bigint, bytes as Buffer). */
export function readManifest(bytes: Uint8Array): { metadata: Record<string, string>; entries: unknown[] } {
  const file = readAvroFile(bytes);
  return { metadata: file.metadata, entries: file.records };
}

function entryRecord(file: DataFile, snapshotId: bigint): Record<string, unknown> {
  const metrics: DataFileMetrics = file.metrics ?? {};
  return {
    status: STATUS_ADDED,
    snapshot_id: snapshotId,
    sequence_number: null,
    file_sequence_number: null,
    data_file: {
      content: CONTENT_DATA,
      file_path: file.filePath,
      file_format: 'PARQUET',
      partition: {},
      record_count: BigInt(file.recordCount),
      file_size_in_bytes: BigInt(file.fileSizeInBytes),
      column_sizes: intMap(metrics.columnSizes),
      value_counts: intMap(metrics.valueCounts),
      null_value_counts: intMap(metrics.nullValueCounts),
      nan_value_counts: intMap(metrics.nanValueCounts),
      lower_bounds: bytesMap(metrics.lowerBounds),
      upper_bounds: bytesMap(metrics.upperBounds),
      key_metadata: null,
      split_offsets: metrics.splitOffsets === undefined ? null : [...metrics.splitOffsets],
      equality_ids: null,
      sort_order_id: null,
    },
  };
}

/** Avro maps with int keys are arrays of {key, value}, in field id order. */
function intMap(map: ReadonlyMap<number, bigint> | undefined): Array<{ key: number; value: bigint }> | null {
  if (map === undefined) return null;
  return [...map].sort(([a], [b]) => a - b).map(([key, value]) => ({ key, value }));
}

function bytesMap(map: ReadonlyMap<number, Uint8Array> | undefined): Array<{ key: number; value: Buffer }> | null {
  if (map === undefined) return null;
  return [...map]
    .sort(([a], [b]) => a - b)
    .map(([key, value]) => ({ key, value: Buffer.from(value.buffer, value.byteOffset, value.byteLength) }));
}
