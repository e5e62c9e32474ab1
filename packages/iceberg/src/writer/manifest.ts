import { IcebergError } from '../errors.ts';
import type { PartitionSpec, SchemaJson } from '../spec/metadata.ts';
import { type Schema, schemaFromJson, schemaToJson } from '../spec/schema.ts';
import { type AvroCodec, readAvroFile, writeAvroFile } from './avro.ts';
import type { DataFile, DataFileMetrics } from './data-file.ts';
import type { ManifestFile } from './manifest-list.ts';
import { bindPartitionSpec } from '../partition/bound-spec.ts';
import { avroPartitionType } from '../partition/values.ts';
import { type ManifestFormatVersion, manifestEntrySchema } from './manifest-schemas.ts';

/** A manifest entry's status (spec: `manifest_entry.status`). */
export const ENTRY_STATUS = Object.freeze({ EXISTING: 0, ADDED: 1, DELETED: 2 } as const);
export type EntryStatus = (typeof ENTRY_STATUS)[keyof typeof ENTRY_STATUS];
const CONTENT_DATA = 0;

/**
 * The `data_file` record of an entry as decoded (snake_case, as the spec names the fields;
 * longs as bigint, bytes as Buffer, int maps as arrays of `{key, value}`), so a file another
 * writer described is written back exactly as it was.
 */
export interface ManifestDataFile {
  content: number;
  file_path: string;
  file_format: string;
  partition: Record<string, unknown>;
  record_count: bigint;
  file_size_in_bytes: bigint;
  [field: string]: unknown;
}

/**
 * One manifest entry with Iceberg's inheritance already applied when read through
 * `readManifestEntries` with its manifest list entry: snapshot id and sequence numbers are
 * explicit, so the entry can be carried into another manifest unchanged.
 */
export interface ManifestEntry {
  status: EntryStatus;
  snapshotId: bigint | null;
  /** The data sequence number; null only for entries a commit has yet to assign. */
  sequenceNumber: bigint | null;
  fileSequenceNumber: bigint | null;
  dataFile: ManifestDataFile;
}

export interface WriteManifestOptions {
  /** The table schema the files were written with (model or REST JSON). */
  schema: Schema | SchemaJson;
  partitionSpec: Pick<PartitionSpec, 'spec-id' | 'fields'>;
  /** The table's format version: 2 (the default) or 3. */
  formatVersion?: number;
  /** The snapshot that adds these files. */
  snapshotId: bigint;
  dataFiles: readonly DataFile[];
  codec?: AvroCodec;
}

/**
 * A data manifest listing `dataFiles` as added by `snapshotId`. Sequence numbers (and in v3
 * first row ids) are left null: the files inherit them when the commit assigns them.
 */
export function writeManifest(options: WriteManifestOptions): Uint8Array {
  const { dataFiles, snapshotId, ...rest } = options;
  return writeManifestEntries({ ...rest, entries: dataFiles.map((file) => addedEntry(file, snapshotId)) });
}

export interface WriteManifestEntriesOptions extends Omit<WriteManifestOptions, 'snapshotId' | 'dataFiles'> {
  entries: readonly ManifestEntry[];
}

/**
 * A data manifest of any entries: added ones, and existing or deleted ones carried from other
 * manifests (merges, rewrites) with their own snapshot ids, sequence numbers and (v3) first
 * row ids.
 */
export function writeManifestEntries(options: WriteManifestEntriesOptions): Uint8Array {
  const formatVersion = options.formatVersion ?? 2;
  if (formatVersion !== 2 && formatVersion !== 3) {
    throw new IcebergError('unsupported', `manifests of format version ${formatVersion} are not written; only versions 2 and 3`);
  }
  const schema = 'schemaId' in options.schema ? options.schema : schemaFromJson(options.schema);
  const partition = bindPartitionSpec(options.partitionSpec, schema).fields.map((f) => ({ name: f.avroName, fieldId: f.fieldId, type: avroPartitionType(f.result, f.fieldId) }));
  return writeAvroFile(manifestEntrySchema(partition, formatVersion as ManifestFormatVersion), options.entries.map(entryRecord), {
    codec: options.codec,
    metadata: {
      schema: JSON.stringify(schemaToJson(schema)),
      'schema-id': String(schema.schemaId),
      'partition-spec': JSON.stringify(options.partitionSpec.fields),
      'partition-spec-id': String(options.partitionSpec['spec-id']),
      'format-version': String(formatVersion),
      content: 'data',
    },
  });
}

/** The entries of a manifest as avsc decodes them (longs as bigint, bytes as Buffer). */
export function readManifest(bytes: Uint8Array): { metadata: Record<string, string>; entries: unknown[] } {
  const file = readAvroFile(bytes);
  return { metadata: file.metadata, entries: file.records };
}

/**
 * The entries of a manifest. Given the manifest's entry in its manifest list, entries inherit
 * what the spec says they inherit from it: a null snapshot id the manifest's
 * `added_snapshot_id`, an added entry's null sequence numbers the manifest's
 * `sequence_number`, and (v3) a data file's null first row id the manifest's `first_row_id`
 * plus the rows of the files before it that had none. Entries of v1 manifests get the v2
 * defaults (content 0).
 */
export function readManifestEntries(
  bytes: Uint8Array,
  manifest?: Pick<ManifestFile, 'added_snapshot_id' | 'sequence_number' | 'first_row_id'>,
): ManifestEntry[] {
  const file = readAvroFile(bytes);
  // Every file of a v1 table has sequence number 0.
  const v1 = file.metadata['format-version'] === '1';
  let nextRowId = manifest?.first_row_id ?? null;
  return file.records.map((raw) => {
    const record = raw as Record<string, unknown>;
    const status = record.status as EntryStatus;
    const inherited = v1 ? 0n : manifest !== undefined && status === ENTRY_STATUS.ADDED ? manifest.sequence_number : null;
    const sequence = (value: unknown): bigint | null => (typeof value === 'bigint' ? value : inherited);
    return {
      status,
      snapshotId: typeof record.snapshot_id === 'bigint' ? record.snapshot_id : (manifest?.added_snapshot_id ?? null),
      sequenceNumber: sequence(record.sequence_number),
      fileSequenceNumber: sequence(record.file_sequence_number),
      dataFile: inheritRowId(withV2Fields(record.data_file as Record<string, unknown>)),
    };
  });

  function inheritRowId(dataFile: ManifestDataFile): ManifestDataFile {
    if (nextRowId === null || dataFile.content !== CONTENT_DATA || typeof dataFile.first_row_id === 'bigint') return dataFile;
    const first = nextRowId;
    nextRowId += dataFile.record_count;
    return { ...dataFile, first_row_id: first };
  }
}

/** The `data_file` fields that may be absent from another writer's record (v1 lacks some, v2 the v3 ones). */
const OPTIONAL_DATA_FILE_FIELDS = (
  JSON.parse(manifestEntrySchema([], 3)) as { fields: Array<{ name: string; type: { fields?: Array<{ name: string; type: unknown }> } }> }
).fields
  .find((f) => f.name === 'data_file')!
  .type.fields!.filter((f) => Array.isArray(f.type))
  .map((f) => f.name);

function withV2Fields(record: Record<string, unknown>): ManifestDataFile {
  const file: Record<string, unknown> = { ...record, content: typeof record.content === 'number' ? record.content : CONTENT_DATA };
  for (const name of OPTIONAL_DATA_FILE_FIELDS) file[name] ??= null;
  return file as ManifestDataFile;
}

function entryRecord(entry: ManifestEntry): Record<string, unknown> {
  return {
    status: entry.status,
    snapshot_id: entry.snapshotId,
    sequence_number: entry.sequenceNumber,
    file_sequence_number: entry.fileSequenceNumber,
    data_file: entry.dataFile,
  };
}

function addedEntry(file: DataFile, snapshotId: bigint): ManifestEntry {
  const metrics: DataFileMetrics = file.metrics ?? {};
  return {
    status: ENTRY_STATUS.ADDED,
    snapshotId,
    sequenceNumber: null,
    fileSequenceNumber: null,
    dataFile: {
      content: CONTENT_DATA,
      file_path: file.filePath,
      file_format: 'PARQUET',
      partition: file.partition ?? {},
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
      // v3: assigned by inheritance once the commit gives the manifest its first row id.
      first_row_id: null,
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
