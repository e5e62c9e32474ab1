import type { RestCatalog } from '../catalog/rest/client.ts';
import type { LoadTableResult, TableIdent } from '../catalog/rest/types.ts';
import { IcebergError, isIcebergError } from '../errors.ts';
import type { FileIO } from '../io/file-io.ts';
import {
  ancestryCovers,
  branchHead,
  currentSchema,
  defaultPartitionSpec,
  isInAncestry,
  type TableMetadata,
} from '../spec/metadata.ts';
import { bindPartitionSpec } from '../partition/bound-spec.ts';
import { partitionSummaries } from '../partition/summary.ts';
import { schemaFromJson } from '../spec/schema.ts';
import { assignFirstRowIds, readManifestList, writeManifest, writeManifestList, type DataFile, type FieldSummary, type ManifestFile } from '../writer/index.ts';
import { manifestListLocation, manifestLocation } from './locations.ts';
import { ManifestMerger, manifestMergePolicy } from './merge-manifests.ts';
import { backoffMs, DEFAULT_RETRY_POLICY, sleep, type RetryPolicy } from './retry.ts';
import { newSnapshotId } from './snapshot-id.ts';
import { mainSnapshotCommit } from './snapshot-commit.ts';
import { appendSummary, type ListedTotals } from './summary.ts';

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

interface WrittenManifest {
  location: string;
  length: bigint;
  specId: number;
  addedFiles: number;
  addedRows: bigint;
  filesSize: bigint;
  partitions: FieldSummary[];
}

/**
 * Appends data files to a format v2 table as one snapshot on `main`: the new manifest plus the
 * parent's manifests, small ones merged as Java's merge append does when the table's
 * `commit.manifest-merge.enabled` is true (the default; see merge-manifests.ts), else copied
 * as they are (a fast append).
 *
 * A lost race (409) reloads, rebuilds the manifest list on the new head and commits the same
 * manifest again. An unknown outcome (5xx, timeout) reloads and looks for the snapshot id on
 * `main` before retrying; the id stays the same across attempts so that check is exact.
 */
export async function appendDataFiles(options: AppendOptions): Promise<AppendResult> {
  if (options.dataFiles.length === 0) throw new IcebergError('bad_request', 'an append needs at least one data file');
  const state: AppendState = { manifest: undefined, merger: undefined, sawUnknownOutcome: false };
  try {
    const result = await appendWithRetries(options, state);
    if (result.committed) await deleteUnreferenced(options.io, state, result.committed);
    return result.result;
  } catch (error) {
    await deleteUnreferenced(options.io, state, []);
    throw error;
  }
}

interface AppendState {
  manifest: WrittenManifest | undefined;
  /** Made once from the first base's properties, and kept so retries reuse its merges. */
  merger: ManifestMerger | undefined;
  sawUnknownOutcome: boolean;
}

/**
 * Deletes the manifests this append wrote that `committed` (the landed list's manifests, or
 * none) does not reference: a merged manifest of a lost race, or ours once merged into
 * another. After an unknown outcome nothing is deleted, as a list we lost track of may hold them.
 */
async function deleteUnreferenced(io: FileIO, state: AppendState, committed: readonly ManifestFile[]): Promise<void> {
  if (state.sawUnknownOutcome) return;
  const referenced = new Set(committed.map((m) => m.manifest_path));
  const written = [...(state.manifest ? [state.manifest.location] : []), ...(state.merger?.written ?? [])];
  await Promise.all(written.filter((location) => !referenced.has(location)).map((location) => bestEffortDelete(io, location)));
}

/** The result, and the manifests of the list this call committed (none when found landed). */
interface Attempted {
  result: AppendResult;
  committed: ManifestFile[] | undefined;
}

/** Clock skew allowed between this process and the writers whose snapshot times the walk reads. */
const CLOCK_MARGIN_MS = 10 * 60_000;

async function appendWithRetries(options: AppendOptions, state: AppendState): Promise<Attempted> {
  const { catalog, table, io } = options;
  const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
  const snapshotId = options.snapshotId ?? newSnapshotId();
  const startedAt = Date.now();
  let metadata = (options.base ?? (await catalog.loadTable(table))).metadata;
  let lastError: IcebergError | undefined;
  const landed = (attempts: number): Attempted => ({
    result: { snapshotId, metadata, attempts, foundInAncestry: true, manifestLocation: undefined, manifestListLocation: undefined },
    committed: undefined,
  });
  /**
   * Whether an earlier attempt landed. Once an outcome was unknown and main's history is cut (a
   * catalog serving the head alone, or expiry), a later commit may hide ours: the head's list
   * still names the manifest ours added unless a merge folded it away, and then nothing here
   * can tell, so the append stops rather than commit twice.
   */
  const hasLanded = async (attempts: number): Promise<boolean> => {
    if (isInAncestry(metadata, snapshotId)) return true;
    if (!state.sawUnknownOutcome || ancestryCovers(metadata, startedAt - CLOCK_MARGIN_MS)) return false;
    const head = branchHead(metadata);
    if (head && readManifestList(await io.get(head['manifest-list'])).some((m) => m.added_snapshot_id === snapshotId)) return true;
    throw new IcebergError(
      'commit_state_unknown',
      `${lastError?.message ?? 'commit'}: outcome unknown after ${attempts} attempts, and the catalog keeps no full history of main to tell whether it landed`,
      { cause: lastError },
    );
  };

  for (let attempt = 1; attempt <= policy.attempts; attempt++) {
    if (await hasLanded(attempt - 1)) return landed(attempt - 1);
    await options.validateBase?.(metadata);
    assertWritable(metadata, state.manifest);
    state.manifest ??= await writeOurManifest(io, metadata, snapshotId, options.dataFiles);
    state.merger ??= new ManifestMerger(io, manifestMergePolicy(metadata.properties));
    const manifest = state.manifest;

    const parent = branchHead(metadata);
    const parentManifests = parent ? readManifestList(await io.get(parent['manifest-list'])) : [];
    const sequenceNumber = (metadata['last-sequence-number'] ?? 0) + 1;
    const listLocation = manifestListLocation(metadata.location, snapshotId, attempt);
    const ours: ManifestFile = {
      manifest_path: manifest.location,
      manifest_length: manifest.length,
      partition_spec_id: manifest.specId,
      content: 0,
      sequence_number: BigInt(sequenceNumber),
      min_sequence_number: BigInt(sequenceNumber),
      added_snapshot_id: snapshotId,
      added_files_count: manifest.addedFiles,
      existing_files_count: 0,
      deleted_files_count: 0,
      added_rows_count: manifest.addedRows,
      existing_rows_count: 0n,
      deleted_rows_count: 0n,
      partitions: manifest.partitions,
      key_metadata: null,
    };
    const merged = await state.merger.merge({ metadata, snapshotId, sequenceNumber: BigInt(sequenceNumber), manifests: [ours, ...parentManifests] });
    // v3: the snapshot's row ids start at the table's next-row-id, reread on every attempt.
    const lineage = metadata['format-version'] >= 3 ? rowLineage(metadata, merged) : undefined;
    const manifests = lineage?.manifests ?? merged;
    await io.put(
      listLocation,
      writeManifestList({
        snapshotId,
        parentSnapshotId: parent?.['snapshot-id'] ?? null,
        sequenceNumber: BigInt(sequenceNumber),
        manifests,
        ...(lineage ? { formatVersion: 3, firstRowId: lineage.firstRowId } : {}),
      }),
    );
    const summary = appendSummary(
      parent?.summary,
      { dataFiles: manifest.addedFiles, records: manifest.addedRows, filesSize: manifest.filesSize },
      parent ? listedTotals(parentManifests) : undefined,
      options.summary,
    );

    try {
      const committed = await catalog.commitTable(
        table,
        mainSnapshotCommit(metadata, parent, {
          snapshotId,
          sequenceNumber: BigInt(sequenceNumber),
          manifestList: listLocation,
          summary,
          ...(lineage ? { firstRowId: lineage.firstRowId, addedRows: lineage.addedRows } : {}),
        }),
      );
      return {
        result: {
          snapshotId,
          metadata: committed.metadata,
          attempts: attempt,
          foundInAncestry: false,
          manifestLocation: manifests.find((m) => m.added_snapshot_id === snapshotId && m.added_files_count > 0)?.manifest_path,
          manifestListLocation: listLocation,
        },
        committed: manifests,
      };
    } catch (error) {
      if (!isIcebergError(error) || (error.kind !== 'commit_conflict' && error.kind !== 'commit_state_unknown')) throw error;
      lastError = error;
      if (error.kind === 'commit_state_unknown') state.sawUnknownOutcome = true;
      // After a definite rejection nothing refers to this list; after an unknown outcome it may.
      if (error.kind === 'commit_conflict') await bestEffortDelete(io, listLocation);
    }
    if (attempt < policy.attempts) {
      const delayMs = backoffMs(policy, attempt);
      options.onRetry?.({ attempt, error: lastError, delayMs });
      await sleep(delayMs);
    }
    try {
      metadata = (await reload(catalog, table, policy)).metadata;
    } catch (error) {
      // Without a reload an unknown outcome stays unknown: report that, not the outage.
      if (lastError.kind === 'commit_state_unknown') throw lastError;
      throw error;
    }
  }

  // The last attempt's outcome may still be unknown: the reload above settles it.
  if (await hasLanded(policy.attempts)) return landed(policy.attempts);
  throw lastError ?? new IcebergError('commit_conflict', 'append gave up');
}

/** The table's next row id and the manifests with first row ids assigned from it (format v3). */
function rowLineage(metadata: TableMetadata, manifests: readonly ManifestFile[]): { firstRowId: bigint; addedRows: bigint; manifests: ManifestFile[] } {
  const next = metadata['next-row-id'];
  const firstRowId = typeof next === 'bigint' ? next : BigInt(typeof next === 'number' ? next : 0);
  const assigned = assignFirstRowIds(manifests, firstRowId);
  return { firstRowId, addedRows: assigned.addedRows, manifests: assigned.manifests };
}

/**
 * This library writes format v2 and v3 tables. The files must be partitioned by the default spec
 * (each with its partition record; see `splitByPartition`), so a retry that finds another
 * default spec stops rather than file rows under the wrong partition.
 */
function assertWritable(metadata: TableMetadata, manifest: WrittenManifest | undefined): void {
  const version = metadata['format-version'];
  if (version !== 2 && version !== 3) {
    throw new IcebergError('unsupported', `table format version ${version} is not supported for appends; only version 2 and 3 tables can be written`);
  }
  if (manifest !== undefined && manifest.specId !== metadata['default-spec-id']) {
    throw new IcebergError('commit_conflict', `the table's partition spec changed to ${metadata['default-spec-id']} while the files were written for spec ${manifest.specId}`);
  }
}

async function writeOurManifest(io: FileIO, metadata: TableMetadata, snapshotId: bigint, dataFiles: readonly DataFile[]): Promise<WrittenManifest> {
  const location = manifestLocation(metadata.location);
  const schema = schemaFromJson(currentSchema(metadata));
  const spec = defaultPartitionSpec(metadata);
  const bound = bindPartitionSpec(spec, schema);
  const unplaced = dataFiles.find((f) => bound.fields.some((p) => !(p.avroName in (f.partition ?? {}))));
  if (unplaced) throw new IcebergError('bad_request', `data file ${unplaced.filePath} has no value for every field of partition spec ${spec['spec-id']}`);
  const bytes = writeManifest({ schema, partitionSpec: spec, formatVersion: metadata['format-version'], snapshotId, dataFiles });
  await io.put(location, bytes);
  return {
    location,
    length: BigInt(bytes.byteLength),
    specId: spec['spec-id'],
    partitions: partitionSummaries(bound, dataFiles.map((f) => f.partition ?? {})),
    addedFiles: dataFiles.length,
    addedRows: dataFiles.reduce((sum, f) => sum + BigInt(f.recordCount), 0n),
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

/** Reloads the table, waiting out a short catalog outage within the retry policy. */
async function reload(catalog: RestCatalog, table: TableIdent, policy: RetryPolicy): Promise<LoadTableResult> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await catalog.loadTable(table);
    } catch (error) {
      if (!isIcebergError(error, 'unavailable') || attempt >= policy.attempts) throw error;
      await sleep(backoffMs(policy, attempt));
    }
  }
}

async function bestEffortDelete(io: FileIO, location: string): Promise<void> {
  try {
    await io.delete(location);
  } catch {
    // An orphaned file costs storage, not correctness.
  }
}
