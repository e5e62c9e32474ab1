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
import { listEntry, tally, type WrittenManifest } from './written-manifest.ts';

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
  const added = readManifestEntries(writeManifest({ schema: currentSchema(metadata), partitionSpec: spec, formatVersion: metadata['format-version'], snapshotId, dataFiles }));
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

async function putManifest(io: FileIO, metadata: TableMetadata, spec: PartitionSpec, entries: readonly ManifestEntry[]): Promise<WrittenManifest> {
  const location = manifestLocation(metadata.location);
  // v3: each entry keeps its data file's first row id, so its rows keep their ids.
  const bytes = writeManifestEntries({ schema: currentSchema(metadata), partitionSpec: spec, formatVersion: metadata['format-version'], entries });
  await io.put(location, bytes);
  return { location, length: BigInt(bytes.byteLength), specId: spec['spec-id'], ...tally(entries), partitions: summaries(metadata, spec, entries) };
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
