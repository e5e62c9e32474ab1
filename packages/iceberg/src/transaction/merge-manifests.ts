import { IcebergError } from '../errors.ts';
import type { FileIO } from '../io/file-io.ts';
import { type BoundPartitionSpec, bindPartitionSpec } from '../partition/bound-spec.ts';
import { partitionSummaries } from '../partition/summary.ts';
import { currentSchema, type TableMetadata } from '../spec/metadata.ts';
import { schemaFromJson } from '../spec/schema.ts';
import {
  ENTRY_STATUS,
  readManifestEntries,
  writeManifestEntries,
  type ManifestEntry,
  type ManifestFile,
} from '../writer/index.ts';
import { manifestLocation } from './locations.ts';
import { listEntry, tally, type WrittenManifest } from './written-manifest.ts';

/** The table properties of the merge, named and defaulted as Java's TableProperties. */
export const MANIFEST_MERGE_ENABLED = 'commit.manifest-merge.enabled';
export const MANIFEST_MIN_MERGE_COUNT = 'commit.manifest.min-count-to-merge';
export const MANIFEST_TARGET_SIZE_BYTES = 'commit.manifest.target-size-bytes';

export interface ManifestMergePolicy {
  enabled: boolean;
  /** The bin holding the new manifest is merged only from this many manifests on. */
  minCountToMerge: number;
  /** Manifests are packed into bins of at most this many bytes (by `manifest_length`). */
  targetSizeBytes: number;
}

export const DEFAULT_MANIFEST_MERGE_POLICY: Readonly<ManifestMergePolicy> = Object.freeze({
  enabled: true,
  minCountToMerge: 100,
  targetSizeBytes: 8 * 1024 * 1024,
});

/** The merge policy a table's properties set; a malformed value fails as it does in Java. */
export function manifestMergePolicy(properties: Readonly<Record<string, string>> = {}): ManifestMergePolicy {
  const enabled = properties[MANIFEST_MERGE_ENABLED];
  return {
    // Java's Boolean.parseBoolean: "true" in any case, anything else is false.
    enabled: enabled === undefined ? DEFAULT_MANIFEST_MERGE_POLICY.enabled : enabled.toLowerCase() === 'true',
    minCountToMerge: integerProperty(properties, MANIFEST_MIN_MERGE_COUNT, DEFAULT_MANIFEST_MERGE_POLICY.minCountToMerge),
    targetSizeBytes: integerProperty(properties, MANIFEST_TARGET_SIZE_BYTES, DEFAULT_MANIFEST_MERGE_POLICY.targetSizeBytes),
  };
}

function integerProperty(properties: Readonly<Record<string, string>>, name: string, fallback: number): number {
  const value = properties[name];
  if (value === undefined) return fallback;
  if (!/^\s*[-+]?\d+\s*$/.test(value) || !Number.isSafeInteger(Number(value))) {
    throw new IcebergError('unsupported', `table property ${name} must be an integer, not ${JSON.stringify(value)}`);
  }
  return Number(value);
}

/**
 * Java's `ListPacker.packEnd` with a lookback of 1: items are packed in order from the last,
 * one open bin at a time, and a bin is closed when the next item would take it past
 * `targetWeight` (an item heavier than that gets a bin of its own). Bins and their items keep
 * the input order, so the only under-filled bin is the first: the one holding the newest
 * manifest, merged again next time.
 */
export function packEnd<T>(items: readonly T[], weight: (item: T) => number, targetWeight: number): T[][] {
  const bins: T[][] = [];
  let open: T[] | undefined;
  let openWeight = 0;
  for (const item of [...items].reverse()) {
    const w = weight(item);
    if (open && openWeight + w <= targetWeight) {
      open.push(item);
      openWeight += w;
    } else {
      open = [item];
      openWeight = w;
      bins.push(open);
    }
  }
  return bins.reverse().map((bin) => bin.reverse());
}

/** A run of manifests of one spec: kept in the list as they are, or merged into one. */
export interface ManifestBin {
  /** The manifests' spec (the first's, for the delete manifests, which are only kept). */
  specId: number;
  merge: boolean;
  manifests: ManifestFile[];
}

/**
 * Java's ManifestMergeManager on the manifests of a new snapshot (`manifests[0]` is the one
 * the snapshot writes, then the parent's): manifests without live files are dropped (as
 * MergingSnapshotProducer does); data manifests are grouped by spec id, highest first, and
 * each group of a spec in `mergeableSpecIds` is packed with `packEnd`. A bin of one is kept;
 * the bin holding the new manifest is kept while it has fewer than `minCountToMerge`
 * manifests, so one large manifest does not hold back merging older ones; every other bin is
 * merged. Groups of other specs and delete manifests (never merged with data) are kept.
 */
export function planManifestMerge(
  manifests: readonly ManifestFile[],
  policy: Pick<ManifestMergePolicy, 'minCountToMerge' | 'targetSizeBytes'>,
  mergeableSpecIds: ReadonlySet<number>,
): ManifestBin[] {
  const first = manifests[0];
  if (first === undefined) return [];
  const live = manifests.filter((m) => m === first || m.added_files_count > 0 || m.existing_files_count > 0);

  const groups = new Map<number, ManifestFile[]>();
  for (const m of live.filter((m) => m.content === 0)) {
    const group = groups.get(m.partition_spec_id);
    if (group) group.push(m);
    else groups.set(m.partition_spec_id, [m]);
  }
  const bins: ManifestBin[] = [];
  for (const [specId, group] of [...groups].sort(([a], [b]) => b - a)) {
    if (!mergeableSpecIds.has(specId)) {
      bins.push({ specId, merge: false, manifests: group });
      continue;
    }
    for (const bin of packEnd(group, (m) => Number(m.manifest_length), policy.targetSizeBytes)) {
      const held = bin.length === 1 || (bin.includes(first) && bin.length < policy.minCountToMerge);
      bins.push({ specId, merge: !held, manifests: bin });
    }
  }
  const deletes = live.filter((m) => m.content !== 0);
  if (deletes.length > 0) bins.push({ specId: deletes[0]!.partition_spec_id, merge: false, manifests: deletes });
  return bins;
}

export interface MergeRequest {
  /** The table the snapshot is built on: its current schema and specs are written with. */
  metadata: TableMetadata;
  snapshotId: bigint;
  sequenceNumber: bigint;
  /** The new snapshot's manifest first, then the parent's. */
  manifests: readonly ManifestFile[];
}

/**
 * Merges a new snapshot's manifests as Java's merge append does, for one append across its
 * commit attempts: a bin met again on a later attempt (same manifests) reuses the manifest
 * merged for it, as Java's ManifestMergeManager caches merges for retries. Entries the new
 * snapshot adds stay ADDED and inherit its sequence number; every other live entry becomes
 * EXISTING with its own snapshot id and sequence numbers.
 */
export class ManifestMerger {
  readonly policy: ManifestMergePolicy;
  private readonly io: FileIO;
  private readonly merged = new Map<string, Promise<WrittenManifest>>();
  /**
   * Manifests read so far, by path (a manifest file never changes): after a lost race the bin
   * differs by the rival's new manifests only, and reading the rest again would make every
   * retry as slow as the first while a busy writer keeps committing.
   */
  private readonly manifestBytes = new Map<string, Promise<Uint8Array>>();
  private readonly locations: string[] = [];

  constructor(io: FileIO, policy: ManifestMergePolicy) {
    this.io = io;
    this.policy = policy;
  }

  /** Every merged manifest written so far, committed or not. */
  get written(): readonly string[] {
    return this.locations;
  }

  /** The manifest list entries of the new snapshot: `request.manifests` when merging is off. */
  async merge(request: MergeRequest): Promise<ManifestFile[]> {
    if (!this.policy.enabled) return [...request.manifests];
    const specs = boundSpecs(request.metadata);
    const bins = planManifestMerge(request.manifests, this.policy, new Set(specs.keys()));
    const results = await Promise.all(
      bins.map(async (bin) => (bin.merge ? [listEntry(await this.mergedFor(bin, specs.get(bin.specId)!, request), request.snapshotId, request.sequenceNumber)] : bin.manifests)),
    );
    return results.flat();
  }

  private mergedFor(bin: ManifestBin, spec: BoundPartitionSpec, request: MergeRequest): Promise<WrittenManifest> {
    const key = bin.manifests.map((m) => m.manifest_path).join('\n');
    let merged = this.merged.get(key);
    if (!merged) {
      merged = this.write(bin, spec, request);
      this.merged.set(key, merged);
    }
    return merged;
  }

  private bytesOf(path: string): Promise<Uint8Array> {
    let bytes = this.manifestBytes.get(path);
    if (!bytes) {
      bytes = this.io.get(path);
      // A failed read is not kept: the next attempt reads again.
      bytes.catch(() => this.manifestBytes.delete(path));
      this.manifestBytes.set(path, bytes);
    }
    return bytes;
  }

  private async write(bin: ManifestBin, bound: BoundPartitionSpec, request: MergeRequest): Promise<WrittenManifest> {
    const spec = request.metadata['partition-specs'].find((s) => s['spec-id'] === bin.specId)!;
    const read = await Promise.all(bin.manifests.map(async (m) => readManifestEntries(await this.bytesOf(m.manifest_path), m)));
    const entries = read.flat().flatMap((entry) => carried(entry, request.snapshotId));
    const bytes = writeManifestEntries({ schema: currentSchema(request.metadata), partitionSpec: spec, formatVersion: request.metadata['format-version'], entries });
    const location = manifestLocation(request.metadata.location);
    this.locations.push(location);
    await this.io.put(location, bytes);

    // Its added entries inherit the commit's sequence number; existing ones keep theirs.
    return {
      location,
      length: BigInt(bytes.byteLength),
      specId: bin.specId,
      ...tally(entries),
      partitions: partitionSummaries(bound, entries.map((entry) => entry.dataFile.partition)),
    };
  }
}

/**
 * An entry as the merged manifest carries it (Java ManifestMergeManager.createManifest). An
 * append deletes nothing, so every DELETED entry is an earlier snapshot's and is dropped.
 */
function carried(entry: ManifestEntry, snapshotId: bigint): ManifestEntry[] {
  if (entry.status === ENTRY_STATUS.DELETED) return [];
  if (entry.status === ENTRY_STATUS.ADDED && entry.snapshotId === snapshotId) {
    // Left unassigned, so the entry inherits whatever sequence number the commit gets.
    return [{ ...entry, sequenceNumber: null, fileSequenceNumber: null }];
  }
  if (entry.snapshotId === null || entry.sequenceNumber === null) {
    // Written as EXISTING without them, the file would inherit the new snapshot's instead.
    throw new IcebergError('unsupported', `manifest entry of ${entry.dataFile.file_path} has no snapshot id or sequence number to carry into a merged manifest`);
  }
  return [{ ...entry, status: ENTRY_STATUS.EXISTING }];
}


/**
 * The table's specs that merged manifests can be written for: those whose source columns the
 * current schema still has (a spec over a dropped column keeps its manifests as they are).
 */
function boundSpecs(metadata: TableMetadata): Map<number, BoundPartitionSpec> {
  const schema = schemaFromJson(currentSchema(metadata));
  const specs = new Map<number, BoundPartitionSpec>();
  for (const spec of metadata['partition-specs']) {
    try {
      specs.set(spec['spec-id'], bindPartitionSpec(spec, schema));
    } catch (error) {
      if (!(error instanceof IcebergError)) throw error;
    }
  }
  return specs;
}
