import {
  branchHead,
  expireSnapshots,
  readManifestList,
  rewriteDataFiles,
  type TableMetadata,
} from '@tablemere/iceberg';
import { toRollError } from '../errors.ts';
import { checkpoint, type RollContext, timed } from '../roll/context.ts';
import { reestablishInvariant } from '../roll/invariant.ts';
import { listIntake } from '../roll/read-batches.ts';
import { reloadTable, type TenantTable } from '../roll/reload.ts';
import { removeOrphans } from './orphans.ts';
import { sendUpkeepReport } from './report.ts';

/** Files in a table's head as its manifest list counts them. */
export interface HeadFiles {
  data: number;
  manifests: number;
}

export interface UpkeepResult {
  /** done: something was committed or an orphan file deleted; nothing: the table needed nothing. */
  outcome: 'done' | 'nothing';
  /** Compaction's `replace` snapshot (expiry adds no snapshot). */
  compactionSnapshotId: bigint | null;
  /** Why compaction did nothing, when it did nothing. */
  compactionSkipped: string | null;
  files: { dataBefore: number; dataAfter: number; manifestsBefore: number; manifestsAfter: number };
  rewritten: { files: number; bytes: bigint; rows: bigint };
  expiredSnapshots: number;
  deletedFiles: { data: number; manifest: number; manifest_list: number };
  snapshotsKept: number;
  /** Files under the table's location no metadata references, past the safety age. */
  orphans: { found: number; deleted: number; bytes: number; young: number; failed: number; skipped: string | null };
  /** Open roll intents settled before anything else, so expiry never erases their proof. */
  settled: number;
}

/** The summary of an upkeep run as one JSON object (log line, operator command). */
export function upkeepJson(result: UpkeepResult): Record<string, unknown> {
  return {
    outcome: result.outcome,
    compaction_snapshot_id: result.compactionSnapshotId?.toString() ?? null,
    compaction_skipped: result.compactionSkipped,
    data_files_before: result.files.dataBefore,
    data_files_after: result.files.dataAfter,
    manifests_before: result.files.manifestsBefore,
    manifests_after: result.files.manifestsAfter,
    rewritten_files: result.rewritten.files,
    rewritten_bytes: Number(result.rewritten.bytes),
    rewritten_rows: Number(result.rewritten.rows),
    expired_snapshots: result.expiredSnapshots,
    deleted_files: result.deletedFiles,
    snapshots_kept: result.snapshotsKept,
    orphan_files: result.orphans,
    settled: result.settled,
  };
}

/**
 * One upkeep run of a sink's table, under the sink's lease (so never beside a roll of it):
 * settle any roll left open, compact the small data files into one `replace` snapshot, expire
 * the snapshots beyond the sink's `keep_snapshots` (none younger than its minimum age) and
 * delete what only they reached, delete the table's orphan files, then report.
 *
 * Settling comes first because expiry is what would erase a crashed roll's proof of commit.
 */
export async function runUpkeep(ctx: RollContext): Promise<UpkeepResult> {
  const started = new Date();
  const table = await timed(ctx, 'reload', () => reloadTable(ctx));
  try {
    const listed = await timed(ctx, 'list', () => listIntake(ctx));
    const invariant = await timed(ctx, 'invariant', () => reestablishInvariant(ctx, table, listed));
    const before = await timed(ctx, 'inspect', () => headFiles(table, table.loaded.metadata));
    const result = await upkeep(ctx, table, before, invariant.settled);
    await timed(ctx, 'report', () => sendUpkeepReport(ctx, { startedAt: started, result }));
    return result;
  } catch (error) {
    // Past the reload a missing file is the table's storage, never a missing table.
    const failure = toRollError(error, 'table_storage');
    await sendUpkeepReport(ctx, { startedAt: started, error: failure }).catch((reportError: unknown) =>
      ctx.log.warn({ err: reportError }, 'could not report the failed upkeep run'),
    );
    throw failure;
  } finally {
    table.io.close();
  }
}

/** Compaction, expiry, orphans: each commit checks the lease first and may be a crash point in tests. */
async function upkeep(ctx: RollContext, current: TenantTable, before: HeadFiles, settled: number): Promise<UpkeepResult> {
  const { crash, settings } = ctx.deps;
  const guard = (point: 'upkeep-before-compact-commit' | 'upkeep-before-expire-commit') => () => {
    checkpoint(ctx);
    ctx.lease.assertHeld(settings.leaseMarginMs);
    crash.reached(point);
  };
  const common = { catalog: current.catalog, table: current.ident, io: current.io };
  const compaction = await timed(ctx, 'compact', () =>
    rewriteDataFiles({
      ...common,
      base: current.loaded,
      ...(settings.upkeep.targetFileBytes === undefined ? {} : { targetFileSizeBytes: settings.upkeep.targetFileBytes }),
      minInputFiles: settings.upkeep.minInputFiles,
      validateBase: guard('upkeep-before-compact-commit'),
    }),
  );
  if (compaction.snapshotId !== null) crash.reached('upkeep-after-compact-commit');
  const expiry = await timed(ctx, 'expire', () =>
    expireSnapshots({
      ...common,
      retainLast: ctx.sink.upkeep.keep_snapshots,
      minAgeMs: ctx.sink.upkeep.min_snapshot_age_seconds * 1000,
      validateBase: guard('upkeep-before-expire-commit'),
    }),
  );
  const after = await timed(ctx, 'inspect', () => headFiles(current, expiry.metadata));
  const orphans = await timed(ctx, 'orphans', () => removeOrphans(ctx, current));
  crash.reached('upkeep-before-report');
  const changed = compaction.snapshotId !== null || expiry.expired.length > 0 || orphans.deleted > 0;
  return {
    outcome: changed ? 'done' : 'nothing',
    compactionSnapshotId: compaction.snapshotId,
    compactionSkipped: compaction.snapshotId === null ? (compaction.skipped ?? 'nothing_to_compact') : null,
    files: { dataBefore: before.data, dataAfter: after.data, manifestsBefore: before.manifests, manifestsAfter: after.manifests },
    rewritten: compaction.rewritten,
    expiredSnapshots: expiry.expired.length,
    deletedFiles: { data: expiry.deletedFiles.dataFiles, manifest: expiry.deletedFiles.manifests, manifest_list: expiry.deletedFiles.manifestLists },
    snapshotsKept: expiry.kept,
    orphans: {
      found: orphans.found,
      deleted: orphans.deleted,
      bytes: orphans.deletedBytes,
      young: orphans.young,
      failed: orphans.failed,
      skipped: orphans.skipped,
    },
    settled,
  };
}

/** Data files and manifests of the head snapshot, from its manifest list alone. */
export async function headFiles(table: TenantTable, metadata: TableMetadata): Promise<HeadFiles> {
  const head = branchHead(metadata);
  if (head === undefined) return { data: 0, manifests: 0 };
  try {
    const manifests = readManifestList(await table.io.get(head['manifest-list']));
    const data = manifests.filter((m) => m.content === 0).reduce((sum, m) => sum + m.added_files_count + m.existing_files_count, 0);
    return { data, manifests: manifests.length };
  } catch (error) {
    throw toRollError(error, 'table_storage');
  }
}
