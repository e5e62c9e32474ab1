import type { FileIO } from '../io/file-io.ts';
import { type BoundPartitionSpec, bindPartitionSpec } from '../partition/bound-spec.ts';
import { partitionSummaries } from '../partition/summary.ts';
import { currentSchema, type PartitionSpec, type TableMetadata } from '../spec/metadata.ts';
import { schemaFromJson } from '../spec/schema.ts';
import type { DataFile } from '../writer/data-file.ts';
import { ENTRY_STATUS, type ManifestEntry, readManifestEntries, writeManifest, writeManifestEntries } from '../writer/manifest.ts';
import type { ManifestFile } from '../writer/manifest-list.ts';
import { IO_WIDTH, mapBounded } from './bounded.ts';
import { manifestLocation } from './locations.ts';
import type { HeadContents } from './table-contents.ts';

/** A manifest this snapshot wrote, with what its manifest list entry says about it. */
export interface WrittenManifest {
  location: string;
  length: bigint;
  specId: number;
  /** The least data sequence number of its entries. */
  minSequenceNumber: bigint;
  counts: Pick<ManifestFile, 'added_files_count' | 'existing_files_count' | 'deleted_files_count' | 'added_rows_count' | 'existing_rows_count' | 'deleted_rows_count'>;
  /** The manifest list's partition field summaries of its entries (readers skip manifests by them). */
  partitions: ManifestFile['partitions'];
}

/**
 * The manifest of the new files, written once for every attempt. Their data sequence number is
 * the one of the snapshot the rewrite started from (Java's use-starting-sequence-number), set
 * explicitly; their file sequence number is left to inherit the commit's.
 */
export async function writeAddedManifest(
  io: FileIO,
  metadata: TableMetadata,
  spec: PartitionSpec,
  snapshotId: bigint,
  startingSequenceNumber: bigint,
  dataFiles: readonly DataFile[],
): Promise<WrittenManifest> {
  // writeManifest builds the entries from the data files' metrics; read back, they take the sequence number.
  const added = readManifestEntries(writeManifest({ schema: currentSchema(metadata), partitionSpec: spec, snapshotId, dataFiles }));
  return putManifest(io, metadata, spec, added.map((entry) => ({ ...entry, sequenceNumber: startingSequenceNumber })));
}

/**
 * The head's manifests for the replace snapshot: those holding none of the replaced files as
 * they are; those that do, per partition spec, rewritten as one manifest with the replaced
 * files' entries DELETED by this snapshot (their sequence numbers kept) and the other live
 * entries EXISTING, as Java's manifest filter does (entries deleted by earlier snapshots are
 * dropped). One manifest rather than one per source: compaction touches every small file's
 * manifest, and readers open each manifest the head lists. Manifests are immutable, so a
 * rewrite is kept in `rewritten` by the manifests it was made of and reused by later attempts.
 */
export async function replaceInManifests(
  io: FileIO,
  metadata: TableMetadata,
  contents: HeadContents,
  replaced: ReadonlySet<string>,
  snapshotId: bigint,
  sequenceNumber: bigint,
  rewritten: Map<string, WrittenManifest>,
): Promise<ManifestFile[]> {
  const holding = (path: string) => contents.entries.get(path)?.some((e) => e.status !== ENTRY_STATUS.DELETED && replaced.has(e.dataFile.file_path)) ?? false;
  const bySpec = new Map<number, ManifestFile[]>();
  for (const manifest of contents.manifests.filter((m) => holding(m.manifest_path))) {
    bySpec.set(manifest.partition_spec_id, [...(bySpec.get(manifest.partition_spec_id) ?? []), manifest]);
  }
  const groups = [...bySpec.values()].map((sources) => ({ sources, key: sources.map((m) => m.manifest_path).sort().join('\n') }));
  await mapBounded(
    groups.filter((g) => !rewritten.has(g.key)),
    { width: IO_WIDTH },
    async ({ sources, key }) => {
      const spec = metadata['partition-specs'].find((s) => s['spec-id'] === sources[0]!.partition_spec_id) as PartitionSpec;
      const kept = sources
        .flatMap((m) => contents.entries.get(m.manifest_path) ?? [])
        .filter((e) => e.status !== ENTRY_STATUS.DELETED)
        .map((e): ManifestEntry => (replaced.has(e.dataFile.file_path) ? { ...e, status: ENTRY_STATUS.DELETED, snapshotId } : { ...e, status: ENTRY_STATUS.EXISTING }));
      rewritten.set(key, await putManifest(io, metadata, spec, kept));
    },
  );
  const touched = new Set(groups.flatMap((g) => g.sources.map((m) => m.manifest_path)));
  return [
    ...groups.map((g) => listEntry(rewritten.get(g.key)!, snapshotId, sequenceNumber)),
    ...contents.manifests.filter((m) => !touched.has(m.manifest_path)),
  ];
}

/** The manifest list entry of a manifest this snapshot wrote. */
export function listEntry(manifest: WrittenManifest, snapshotId: bigint, sequenceNumber: bigint): ManifestFile {
  return {
    manifest_path: manifest.location,
    manifest_length: manifest.length,
    partition_spec_id: manifest.specId,
    content: 0,
    sequence_number: sequenceNumber,
    min_sequence_number: manifest.minSequenceNumber,
    added_snapshot_id: snapshotId,
    ...manifest.counts,
    partitions: manifest.partitions,
    key_metadata: null,
  };
}

async function putManifest(io: FileIO, metadata: TableMetadata, spec: PartitionSpec, entries: readonly ManifestEntry[]): Promise<WrittenManifest> {
  const location = manifestLocation(metadata.location);
  const bytes = writeManifestEntries({ schema: currentSchema(metadata), partitionSpec: spec, entries });
  await io.put(location, bytes);
  const counts = { added_files_count: 0, existing_files_count: 0, deleted_files_count: 0, added_rows_count: 0n, existing_rows_count: 0n, deleted_rows_count: 0n };
  let minSequenceNumber: bigint | undefined;
  for (const entry of entries) {
    const rows = entry.dataFile.record_count;
    if (entry.status === ENTRY_STATUS.ADDED) {
      counts.added_files_count += 1;
      counts.added_rows_count += rows;
    } else if (entry.status === ENTRY_STATUS.EXISTING) {
      counts.existing_files_count += 1;
      counts.existing_rows_count += rows;
    } else {
      counts.deleted_files_count += 1;
      counts.deleted_rows_count += rows;
    }
    const sequence = entry.sequenceNumber;
    if (sequence !== null && (minSequenceNumber === undefined || sequence < minSequenceNumber)) minSequenceNumber = sequence;
  }
  return { location, length: BigInt(bytes.byteLength), specId: spec['spec-id'], minSequenceNumber: minSequenceNumber ?? 0n, counts, partitions: summaries(metadata, spec, entries) };
}

/**
 * Every entry's partition counts, deleted ones too, as Java's manifest writer counts them. A
 * spec whose source column the schema no longer has cannot be bound: no summaries, which
 * readers take as "might match" (never skipping rows).
 */
function summaries(metadata: TableMetadata, spec: PartitionSpec, entries: readonly ManifestEntry[]): ManifestFile['partitions'] {
  let bound: BoundPartitionSpec;
  try {
    bound = bindPartitionSpec(spec, schemaFromJson(currentSchema(metadata)));
  } catch {
    return null;
  }
  return partitionSummaries(bound, entries.map((e) => e.dataFile.partition));
}
