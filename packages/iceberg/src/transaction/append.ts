import type { RestCatalog } from '../catalog/rest/client.ts';
import type { LoadTableResult, TableIdent } from '../catalog/rest/types.ts';
import { IcebergError } from '../errors.ts';
import type { FileIO } from '../io/file-io.ts';
import { branchHead, currentSchema, defaultPartitionSpec, isInAncestry, type TableMetadata } from '../spec/metadata.ts';
import { bindPartitionSpec } from '../partition/bound-spec.ts';
import { partitionSummaries } from '../partition/summary.ts';
import { schemaFromJson } from '../spec/schema.ts';
import { readManifestList, writeManifest, type DataFile, type ManifestFile } from '../writer/index.ts';
import { commitWithRetries, DATA_FORMAT_VERSIONS, passedOn } from './commit-driver.ts';
import { manifestLocation } from './locations.ts';
import { ManifestMerger, manifestMergePolicy } from './merge-manifests.ts';
import type { RetryPolicy } from './retry.ts';
import { newSnapshotId } from './snapshot-id.ts';
import { writeSnapshotAttempt } from './snapshot-commit.ts';
import { appendSummary, type ListedTotals } from './summary.ts';
import { listEntry, type WrittenManifest } from './written-manifest.ts';

export interface AppendOptions {
  catalog: RestCatalog;
  table: TableIdent;
  io: FileIO;
  /** Parquet files already written under the table location, with their metrics. */
  dataFiles: readonly DataFile[];
  /** The table as last loaded; loaded when omitted. */
  base?: LoadTableResult;
  /** Extra snapshot summary properties (strings), e.g. the ids of what this append consumed. */
  summary?: Record<string, string>;
  /**
   * The snapshot id to commit as. Pass one recorded before a previous, interrupted try to
   * make the append idempotent: if it is already on `main`, nothing is written again.
   */
  snapshotId?: bigint;
  retry?: Partial<RetryPolicy>;
  /** Called with every (re)loaded base before building on it; throw to stop the append. */
  validateBase?: (metadata: TableMetadata) => void | Promise<void>;
  /** Told about each failed attempt that will be retried. */
  onRetry?: (event: { attempt: number; error: IcebergError; delayMs: number }) => void;
}

export interface AppendResult {
  snapshotId: bigint;
  /** Table metadata with the snapshot on `main`. */
  metadata: TableMetadata;
  /** Commit attempts made (0 when the snapshot was already on `main`). */
  attempts: number;
  /** True when an earlier attempt with an unknown outcome had in fact landed. */
  foundInAncestry: boolean;
  /**
   * The manifest listing the new files as added (a merged one when the append merged them);
   * undefined when an earlier attempt was found landed.
   */
  manifestLocation: string | undefined;
  manifestListLocation: string | undefined;
}

/**
 * Appends data files to a format v2 or v3 table as one snapshot on `main`: the new manifest plus
 * the parent's manifests, small ones merged as Java's merge append does when the table's
 * `commit.manifest-merge.enabled` is true (the default; see merge-manifests.ts), else copied
 * as they are (a fast append).
 *
 * Committed through the commit driver (commit-driver.ts): a lost race (409) reloads, rebuilds
 * the manifest list on the new head and commits the same manifest again; a lost answer (5xx,
 * timeout) reloads and looks for the snapshot on `main` (`snapshotAttemptLanded`). The snapshot
 * id stays the same across attempts so that check is exact.
 */
export async function appendDataFiles(options: AppendOptions): Promise<AppendResult> {
  if (options.dataFiles.length === 0) throw new IcebergError('bad_request', 'an append needs at least one data file');
  const { io } = options;
  const snapshotId = options.snapshotId ?? newSnapshotId();
  /** Written once, for every attempt. */
  let manifest: OurManifest | undefined;
  /** Made once from the first base's properties, and kept so retries reuse its merges. */
  let merger: ManifestMerger | undefined;
  return commitWithRetries<AppendResult>({
    ...passedOn(options),
    operation: 'append',
    formatVersions: DATA_FORMAT_VERSIONS,
    build: async (context) => {
      const { metadata, attempt, wrote } = context;
      if (isInAncestry(metadata, snapshotId)) return { nothingToDo: foundLanded(snapshotId, metadata, attempt - 1) };
      await options.validateBase?.(metadata);
      assertSameSpec(metadata, manifest);
      if (manifest === undefined) {
        manifest = await writeOurManifest(io, metadata, snapshotId, options.dataFiles);
        wrote(manifest.written.location);
      }
      merger ??= new ManifestMerger(io, manifestMergePolicy(metadata.properties));

      const parent = branchHead(metadata);
      const parentManifests = parent ? readManifestList(await io.get(parent['manifest-list'])) : [];
      const sequenceNumber = BigInt((metadata['last-sequence-number'] ?? 0) + 1);
      const ours = listEntry(manifest.written, snapshotId, sequenceNumber);
      const merged = await merger.merge({ metadata, snapshotId, sequenceNumber, manifests: [ours, ...parentManifests] });
      for (const location of merger.written) wrote(location);
      const summary = appendSummary(
        parent?.summary,
        { dataFiles: manifest.written.counts.added_files_count, records: manifest.written.counts.added_rows_count, filesSize: manifest.filesSize },
        parent ? listedTotals(parentManifests) : undefined,
        options.summary,
      );
      const { manifests, manifestList, ...commit } = await writeSnapshotAttempt(io, context, { snapshotId, sequenceNumber, manifests: merged, summary });
      return {
        ...commit,
        result: (after, attempts, found) =>
          found
            ? foundLanded(snapshotId, after, attempts)
            : {
                snapshotId,
                metadata: after,
                attempts,
                foundInAncestry: false,
                manifestLocation: manifests.find((m) => m.added_snapshot_id === snapshotId && m.added_files_count > 0)?.manifest_path,
                manifestListLocation: manifestList,
              },
      };
    },
  });
}

/** The result when an earlier attempt (or an earlier call with the same snapshot id) landed. */
function foundLanded(snapshotId: bigint, metadata: TableMetadata, attempts: number): AppendResult {
  return { snapshotId, metadata, attempts, foundInAncestry: true, manifestLocation: undefined, manifestListLocation: undefined };
}

/** Our manifest of the data files, and their bytes for the summary. */
interface OurManifest {
  written: WrittenManifest;
  filesSize: bigint;
}

/**
 * The files must be partitioned by the default spec (each with its partition record; see
 * `splitByPartition`), so a retry that finds another default spec stops rather than file rows
 * under the wrong partition.
 */
function assertSameSpec(metadata: TableMetadata, manifest: OurManifest | undefined): void {
  if (manifest !== undefined && manifest.written.specId !== metadata['default-spec-id']) {
    throw new IcebergError('commit_conflict', `the table's partition spec changed to ${metadata['default-spec-id']} while the files were written for spec ${manifest.written.specId}`);
  }
}

async function writeOurManifest(io: FileIO, metadata: TableMetadata, snapshotId: bigint, dataFiles: readonly DataFile[]): Promise<OurManifest> {
  const location = manifestLocation(metadata.location);
  const schema = schemaFromJson(currentSchema(metadata));
  const spec = defaultPartitionSpec(metadata);
  const bound = bindPartitionSpec(spec, schema);
  const unplaced = dataFiles.find((f) => bound.fields.some((p) => !(p.avroName in (f.partition ?? {}))));
  if (unplaced) throw new IcebergError('bad_request', `data file ${unplaced.filePath} has no value for every field of partition spec ${spec['spec-id']}`);
  const bytes = writeManifest({ schema, partitionSpec: spec, formatVersion: metadata['format-version'], snapshotId, dataFiles });
  await io.put(location, bytes);
  const rows = dataFiles.reduce((sum, f) => sum + BigInt(f.recordCount), 0n);
  return {
    written: {
      location,
      length: BigInt(bytes.byteLength),
      specId: spec['spec-id'],
      // Its entries inherit the commit's sequence number.
      minSequenceNumber: null,
      counts: { added_files_count: dataFiles.length, existing_files_count: 0, deleted_files_count: 0, added_rows_count: rows, existing_rows_count: 0n, deleted_rows_count: 0n },
      partitions: partitionSummaries(bound, dataFiles.map((f) => f.partition ?? {})),
    },
    filesSize: dataFiles.reduce((sum, f) => sum + BigInt(f.fileSizeInBytes), 0n),
  };
}

/** What the parent's manifest list says the table holds, for totals its summary lacks. */
function listedTotals(manifests: readonly ManifestFile[]): ListedTotals {
  const totals = { dataFiles: 0n, records: 0n, deleteFiles: 0n };
  for (const m of manifests) {
    const files = BigInt(m.added_files_count) + BigInt(m.existing_files_count);
    if (m.content === 0) {
      totals.dataFiles += files;
      totals.records += BigInt(m.added_rows_count) + BigInt(m.existing_rows_count);
    } else {
      totals.deleteFiles += files;
    }
  }
  return totals;
}
