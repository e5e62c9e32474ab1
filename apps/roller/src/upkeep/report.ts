import { toStorableText, type UpkeepReport } from '@tablemere/contracts';
import type { RollError } from '../errors.ts';
import { isApiRefusal } from '../internal-api.ts';
import { apiFailure } from '../roll/commit.ts';
import type { RollContext } from '../roll/context.ts';
import type { UpkeepResult } from './pipeline.ts';

export type UpkeepReportInput = { startedAt: Date } & ({ result: UpkeepResult } | { error: RollError });

/** The contract's report from what an upkeep run did, or why it stopped. */
export function buildUpkeepReport(leaseId: string, input: UpkeepReportInput, seconds: number): UpkeepReport {
  const base = { lease_id: leaseId, started_at: input.startedAt.toISOString(), seconds: Math.round(seconds * 1000) / 1000 };
  if ('error' in input) {
    return {
      ...base,
      outcome: 'failed',
      snapshot_ids: [],
      // What a failed run changed before it stopped is in the table's history, not here.
      files: { data_before: 0, data_after: 0, manifests_before: 0, manifests_after: 0 },
      rewritten: { files: 0, bytes: 0, rows: 0 },
      expired_snapshots: 0,
      deleted_files: { data: 0, manifests: 0, manifest_lists: 0 },
      snapshots_kept: 0,
      orphan_files: { deleted: 0, bytes: 0 },
      error: { code: input.error.reason, message: toStorableText(input.error.message, 4000) },
    };
  }
  const { result } = input;
  return {
    ...base,
    outcome: result.outcome,
    snapshot_ids: result.compactionSnapshotId === null ? [] : [result.compactionSnapshotId.toString()],
    files: {
      data_before: result.files.dataBefore,
      data_after: result.files.dataAfter,
      manifests_before: result.files.manifestsBefore,
      manifests_after: result.files.manifestsAfter,
    },
    rewritten: { files: result.rewritten.files, bytes: Number(result.rewritten.bytes), rows: Number(result.rewritten.rows) },
    expired_snapshots: result.expiredSnapshots,
    deleted_files: { data: result.deletedFiles.data, manifests: result.deletedFiles.manifest, manifest_lists: result.deletedFiles.manifest_list },
    snapshots_kept: result.snapshotsKept,
    orphan_files: { deleted: result.orphans.deleted, bytes: result.orphans.bytes },
  };
}

/**
 * The run goes to the API, which records it as the sink's last upkeep and audits it
 * (`sink.upkeep`). A lost lease is said as such: the run's commits stand, the record waits.
 */
export async function sendUpkeepReport(ctx: RollContext, input: UpkeepReportInput): Promise<void> {
  const seconds = (Date.now() - input.startedAt.getTime()) / 1000;
  try {
    await ctx.deps.api.reportUpkeep(ctx.sink.id, buildUpkeepReport(ctx.lease.id, input, seconds));
  } catch (error) {
    if (isApiRefusal(error, 'lease_lost')) ctx.log.warn('the lease was lost before the upkeep run was reported; its commits stand');
    throw apiFailure(error);
  }
}
