import { toStorableText, type RollOutcome, type RollReport, type RollReportResult } from '@tablemere/contracts';
import { RollError } from '../errors.ts';
import { isApiRefusal } from '../internal-api.ts';
import { apiFailure } from './commit.ts';
import type { RollContext } from './context.ts';
import type { BatchCount } from './summary.ts';

export interface ReportInput {
  outcome: RollOutcome;
  /** The intent this report closes, when one was recorded. */
  rollId?: string;
  snapshotId: bigint | null;
  batches: readonly BatchCount[];
  attempts: number;
  /** When the reported roll started; one report per start time and sink. */
  startedAt: Date;
  seconds: number;
  error?: string;
}

/** The contract's report from what a roll did. */
export function buildReport(leaseId: string, input: ReportInput): RollReport {
  return {
    lease_id: leaseId,
    ...(input.rollId ? { roll_id: input.rollId } : {}),
    snapshot_id: input.snapshotId === null ? null : input.snapshotId.toString(),
    batches: input.batches.map((b) => ({ batch_id: b.batch_id, rows: b.rows, rejected_rows: b.rejected_rows })),
    rows: input.batches.reduce((sum, b) => sum + b.rows, 0),
    rejected_rows: input.batches.reduce((sum, b) => sum + b.rejected_rows, 0),
    seconds: Math.round(input.seconds * 1000) / 1000,
    attempts: input.attempts,
    started_at: input.startedAt.toISOString(),
    outcome: input.outcome,
    ...(input.error ? { error: toStorableText(input.error, 4000) } : {}),
  };
}

/**
 * Step 10, report: what the roll did goes to the API, which settles the ledger (the batches
 * committed), last_roll, the rejects figures and usage in one transaction. Reports are
 * idempotent, so one repeated after a lost answer changes nothing.
 */
export async function sendReport(ctx: RollContext, input: ReportInput): Promise<RollReportResult> {
  try {
    return await ctx.deps.api.report(ctx.sink.id, buildReport(ctx.lease.id, input));
  } catch (error) {
    if (isApiRefusal(error, 'lease_lost')) throw new RollError('lease_lost', error.message);
    throw apiFailure(error);
  }
}
