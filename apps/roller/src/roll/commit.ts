import type { RollIntent } from '@tablemere/contracts';
import { appendDataFiles, type DataFile, DEFAULT_RETRY_POLICY, isIcebergError, type TableMetadata } from '@tablemere/iceberg';
import { RollError, toRollError } from '../errors.ts';
import { InternalApiError, isApiRefusal } from '../internal-api.ts';
import { checkpoint, type RollContext } from './context.ts';
import type { TenantTable } from './reload.ts';
import { type BatchCount, sinkSummary } from './summary.ts';

/**
 * Records what the roll is about to commit (snapshot id and batch ids) in Postgres through
 * the internal API, before the commit: recovery can tell committed from abandoned rolls even
 * once the snapshot was expired. Needs the lease with time to spare.
 */
export async function recordIntent(ctx: RollContext, snapshotId: bigint, batchIds: readonly string[], segmentIds: readonly string[]): Promise<RollIntent> {
  checkpoint(ctx);
  ctx.lease.assertHeld(ctx.deps.settings.leaseMarginMs);
  try {
    return await ctx.deps.api.recordIntent(ctx.sink.id, { lease_id: ctx.lease.id, snapshot_id: snapshotId.toString(), batch_ids: [...batchIds], segment_ids: [...segmentIds] });
  } catch (error) {
    if (isApiRefusal(error, 'lease_lost')) throw new RollError('lease_lost', error.message);
    throw apiFailure(error);
  }
}

export function apiFailure(error: unknown): RollError {
  if (error instanceof RollError) return error;
  if (error instanceof InternalApiError) return new RollError('api_error', error.message, { cause: error });
  return new RollError('internal', error instanceof Error ? error.message : String(error), { cause: error });
}

export interface CommitPlan {
  snapshotId: bigint;
  dataFiles: readonly DataFile[];
  /** The schema the rows were validated against. */
  schemaId: number;
  /** The partition spec the files were written for. */
  specId: number;
  batches: readonly BatchCount[];
  /** The segments consumed. */
  segments: readonly string[];
  /** The sidecar holding the lists, for a roll of more than 1,000 batches or segments. */
  batchesFile: string | undefined;
}

export type AppendOutcome =
  | { kind: 'committed'; snapshotId: bigint; attempts: number; metadata: TableMetadata; foundInAncestry: boolean }
  /** The table's schema or partition spec changed under the roll: validate and write again against `metadata`, same snapshot id. */
  | { kind: 'schema_changed'; metadata: TableMetadata; attempts: number };

/** Thrown from the base check to leave the append when the schema or spec moved; never escapes this module. */
class SchemaMoved {
  constructor(readonly metadata: TableMetadata) {}
}

/**
 * Step 8, commit: one append of the data files whose summary names the sink and the consumed
 * batches. A lost race re-commits the same file on the new head (5 attempts, 0.5–8 s backoff);
 * before every attempt the lease must still be ours and the schema the one validated against.
 * `unknownOutcome` is set when some attempt's outcome was unknown: then the roll must not
 * claim the commit surely failed.
 */
export async function appendRoll(ctx: RollContext, table: TenantTable, plan: CommitPlan, state: { unknownOutcome: boolean }): Promise<AppendOutcome> {
  let attempts = 1;
  try {
    const result = await appendDataFiles({
      catalog: table.catalog,
      table: table.ident,
      io: table.io,
      // No base: the append loads the table right before its first attempt. Validation and the
      // data file took a while, and another writer committing meanwhile would cost a lost race.
      dataFiles: plan.dataFiles,
      snapshotId: plan.snapshotId,
      summary: sinkSummary(ctx.sink.id, plan.batches, plan.segments, new Date(), plan.batchesFile),
      retry: DEFAULT_RETRY_POLICY,
      validateBase: (metadata) => {
        checkpoint(ctx);
        ctx.lease.assertHeld(ctx.deps.settings.leaseMarginMs);
        if (metadata['current-schema-id'] !== plan.schemaId || metadata['default-spec-id'] !== plan.specId) throw new SchemaMoved(metadata);
      },
      onRetry: ({ attempt, error, delayMs }) => {
        attempts = attempt + 1;
        if (error.kind === 'commit_state_unknown') state.unknownOutcome = true;
        ctx.deps.metrics.commitRetries.inc();
        ctx.log.info({ attempt, kind: error.kind, delay_ms: delayMs }, 'commit attempt failed; retrying on the new base');
      },
    });
    return { kind: 'committed', snapshotId: result.snapshotId, attempts: Math.max(result.attempts, 1), metadata: result.metadata, foundInAncestry: result.foundInAncestry };
  } catch (error) {
    if (error instanceof SchemaMoved) return { kind: 'schema_changed', metadata: error.metadata, attempts };
    if (isIcebergError(error, 'commit_state_unknown')) state.unknownOutcome = true;
    throw toRollError(error, 'catalog');
  }
}
