import { IcebergError } from '../errors.ts';
import { type AvroCodec, readAvroFile, writeAvroFile } from './avro.ts';
import { type ManifestFormatVersion, manifestFileSchema } from './manifest-schemas.ts';

/** A partition field summary (field 508 of a manifest list entry). */
export interface FieldSummary {
  contains_null: boolean;
  contains_nan: boolean | null;
  lower_bound: Uint8Array | null;
  upper_bound: Uint8Array | null;
}

/**
 * One manifest list entry (`manifest_file`, format v2), named as the spec names its fields so
 * entries read from another writer's list are written back unchanged.
 */
export interface ManifestFile {
  manifest_path: string;
  manifest_length: bigint;
  partition_spec_id: number;
  /** 0 data, 1 deletes. */
  content: number;
  sequence_number: bigint;
  min_sequence_number: bigint;
  added_snapshot_id: bigint;
  added_files_count: number;
  existing_files_count: number;
  deleted_files_count: number;
  added_rows_count: bigint;
  existing_rows_count: bigint;
  deleted_rows_count: bigint;
  partitions: FieldSummary[] | null;
  key_metadata: Uint8Array | null;
  /** v3: the first row id of the manifest's files without one; absent or null before v3 and until assigned. */
  first_row_id?: bigint | null;
}

export interface WriteManifestListOptions {
  snapshotId: bigint;
  /** null for the table's first snapshot. */
  parentSnapshotId: bigint | null;
  sequenceNumber: bigint;
  manifests: readonly ManifestFile[];
  codec?: AvroCodec;
  /** 2 (the default) or 3; v3 lists carry each manifest's first row id (see `assignFirstRowIds`). */
  formatVersion?: ManifestFormatVersion;
  /** v3: the snapshot's first-row-id. */
  firstRowId?: bigint;
}

/** A manifest list: our manifests first, then the parent's, each entry as given. */
export function writeManifestList(options: WriteManifestListOptions): Uint8Array {
  const formatVersion = options.formatVersion ?? 2;
  return writeAvroFile(manifestFileSchema(formatVersion), options.manifests.map(manifestRecord), {
    codec: options.codec,
    metadata: {
      'snapshot-id': options.snapshotId.toString(),
      'parent-snapshot-id': options.parentSnapshotId === null ? 'null' : options.parentSnapshotId.toString(),
      'sequence-number': options.sequenceNumber.toString(),
      'format-version': String(formatVersion),
      ...(options.firstRowId === undefined ? {} : { 'first-row-id': options.firstRowId.toString() }),
    },
  });
}

/**
 * v3 row lineage (spec "First Row ID Assignment"): every data manifest without a first row id
 * gets one, from the snapshot's `first-row-id` on, each the previous plus that manifest's added
 * and existing rows (an upper bound of the rows its files inherit ids for). Answers the
 * manifests and the snapshot's `added-rows`, what the table's `next-row-id` advances by.
 */
export function assignFirstRowIds(manifests: readonly ManifestFile[], firstRowId: bigint): { manifests: ManifestFile[]; addedRows: bigint } {
  let next = firstRowId;
  const assigned = manifests.map((m) => {
    if (m.content !== 0 || (m.first_row_id !== undefined && m.first_row_id !== null)) return { ...m, first_row_id: m.first_row_id ?? null };
    const first = next;
    next += m.added_rows_count + m.existing_rows_count;
    return { ...m, first_row_id: first };
  });
  return { manifests: assigned, addedRows: next - firstRowId };
}

/**
 * The entries of a manifest list written by any writer (v1 lists get the v2 defaults the spec
 * prescribes: content 0, sequence numbers 0), with exact 64-bit values.
 */
export function readManifestList(bytes: Uint8Array): ManifestFile[] {
  return readAvroFile(bytes).records.map((record) => manifestFromRecord(record as Record<string, unknown>));
}

function manifestRecord(manifest: ManifestFile): Record<string, unknown> {
  return {
    ...manifest,
    partitions: manifest.partitions === null ? null : manifest.partitions.map((p) => ({ ...p, lower_bound: buffer(p.lower_bound), upper_bound: buffer(p.upper_bound) })),
    key_metadata: buffer(manifest.key_metadata),
  };
}

function manifestFromRecord(record: Record<string, unknown>): ManifestFile {
  const path = record.manifest_path;
  if (typeof path !== 'string') throw new TypeError('manifest list entry without manifest_path');
  const partitions = record.partitions;
  return {
    manifest_path: path,
    manifest_length: long(record, 'manifest_length'),
    partition_spec_id: int(record, 'partition_spec_id'),
    content: record.content === undefined ? 0 : int(record, 'content'),
    sequence_number: record.sequence_number === undefined ? 0n : long(record, 'sequence_number'),
    min_sequence_number: record.min_sequence_number === undefined ? 0n : long(record, 'min_sequence_number'),
    added_snapshot_id: long(record, 'added_snapshot_id'),
    added_files_count: int(record, 'added_files_count'),
    existing_files_count: int(record, 'existing_files_count'),
    deleted_files_count: int(record, 'deleted_files_count'),
    added_rows_count: long(record, 'added_rows_count'),
    existing_rows_count: long(record, 'existing_rows_count'),
    deleted_rows_count: long(record, 'deleted_rows_count'),
    partitions: Array.isArray(partitions) ? partitions.map((p) => summaryFromRecord(p as Record<string, unknown>)) : null,
    key_metadata: bytesOrNull(record.key_metadata),
    first_row_id: typeof record.first_row_id === 'bigint' ? record.first_row_id : null,
  };
}

function summaryFromRecord(record: Record<string, unknown>): FieldSummary {
  return {
    contains_null: record.contains_null === true,
    contains_nan: typeof record.contains_nan === 'boolean' ? record.contains_nan : null,
    lower_bound: bytesOrNull(record.lower_bound),
    upper_bound: bytesOrNull(record.upper_bound),
  };
}

/** v1 lists may leave counts out; v2 requires them, and they cannot be made up. */
function missing(field: string): IcebergError {
  return new IcebergError('unsupported', `manifest list entry lacks ${field} (a format v1 list); it cannot be carried into a v2 list`);
}

function long(record: Record<string, unknown>, field: string): bigint {
  const value = record[field];
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number') return BigInt(value);
  throw missing(field);
}

function int(record: Record<string, unknown>, field: string): number {
  const value = record[field];
  if (typeof value === 'number') return value;
  throw missing(field);
}

function bytesOrNull(value: unknown): Uint8Array | null {
  return value instanceof Uint8Array ? value : null;
}

/** avsc encodes `bytes` only from Buffers. */
function buffer(bytes: Uint8Array | null): Buffer | null {
  return bytes === null ? null : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
