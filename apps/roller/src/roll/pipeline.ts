import type { RollIntent } from '@tablemere/contracts';
import { currentSchema, type DataFile, newSnapshotId, type SchemaJson, type TableMetadata } from '@tablemere/iceberg';
import { ROLL_MAX_BATCH_IDS } from '@tablemere/contracts';
import { RollError } from '../errors.ts';
import { isApiRefusal } from '../internal-api.ts';
import { addNewColumns } from './add-columns.ts';
import { appendRoll, apiFailure, recordIntent } from './commit.ts';
import { measured, type RollContext, timed } from './context.ts';
import { deleteBatches } from './delete.ts';
import { applyFirstRoll } from './first-roll.ts';
import { type Consumed, reestablishInvariant } from './invariant.ts';
import { chooseObjects, type IntakeObject, listIntake, readObjects } from './read-batches.ts';
import { type RejectsReason, writeRejects } from './rejects.ts';
import { reloadTable, type TenantTable } from './reload.ts';
import { sendReport } from './report.ts';
import { writeSidecar } from './sidecar.ts';
import { type BatchCount, listsInline } from './summary.ts';
import { sweepIntake } from './sweep.ts';
import { BatchValidator, type NewFieldOptions, type Validation } from './validate.ts';
import { writeData } from './write.ts';

export interface RollResult {
  /** committed: one snapshot appended; empty: every row rejected, nothing committed; idle: nothing pending. */
  outcome: 'committed' | 'empty' | 'idle';
  snapshotId: bigint | null;
  batches: number;
  rows: number;
  rejected: number;
  reasons: Partial<Record<RejectsReason, number>>;
  /** Commit attempts (0 without a commit). */
  attempts: number;
  /** Earlier rolls settled by the invariant step (committed ones reported, abandoned ones closed). */
  settled: number;
  abandoned: number;
  /** Pending batches left in the intake after this roll (the listing's view). */
  left: number;
  /** Old rejects and roll files deleted. */
  swept: number;
}

/** A schema that keeps changing under the roll is given up on after this many validations. */
const SCHEMA_ROUNDS = 3;
/**
 * Schema changes a roll adding columns validates again after (more than one only when the
 * schema keeps changing under it); fields still unknown after them are rejected as unknown_field.
 */
const ADD_COLUMNS_ROUNDS = 3;

/**
 * One roll of one sink, the steps in the description's order: reload, invariant, first roll,
 * read, validate, (add columns and validate again,) rejects, write, (sidecar,) commit, delete,
 * report, sweep. The caller holds the lease.
 */
export async function runRoll(ctx: RollContext): Promise<RollResult> {
  let table = await timed(ctx, 'reload', () => reloadTable(ctx));
  try {
    if (ctx.sink.state === 'table_missing') await markActive(ctx);
    const listed = await timed(ctx, 'list', () => listIntake(ctx));
    const invariant = await timed(ctx, 'invariant', () => reestablishInvariant(ctx, table, listed));
    table = await timed(ctx, 'first_roll', () => applyFirstRoll(ctx, table));
    const chosen = chooseObjects(ctx, invariant.pending);
    const base = { settled: invariant.settled, abandoned: invariant.abandoned, left: invariant.pending.length - chosen.length };
    if (chosen.length === 0) {
      return { outcome: 'idle', snapshotId: null, batches: 0, rows: 0, rejected: 0, reasons: {}, attempts: 0, ...base, swept: await timed(ctx, 'sweep', () => sweepIntake(ctx, invariant.named)) };
    }
    const result = await rollBatches(ctx, table, chosen, invariant.consumed, invariant.pending);
    return { ...result, ...base, swept: await timed(ctx, 'sweep', () => sweepIntake(ctx, invariant.named)) };
  } finally {
    table.io.close();
  }
}

type BatchesResult = Omit<RollResult, 'settled' | 'abandoned' | 'left' | 'swept'>;

/**
 * The chosen objects read and validated against `schema`, reading and validating side by side,
 * until the next object would carry the roll past ROLL_MAX_BATCH_IDS batches. Only what the
 * roll needs later is kept of each batch, not its bytes: a schema change reads them again
 * (they stay in the intake until the roll deletes them). A batch an earlier commit consumed
 * (`consumed`), or one met already in this roll, is passed over: its object goes with the
 * roll, the batch is not appended again. So does a batch object of the one-object layout still
 * pending under the id of a batch this roll takes from a segment (`copies`: a write of the old
 * layout whose claim was released, its id sent again after the upgrade).
 */
async function readAndValidate(
  ctx: RollContext,
  chosen: readonly IntakeObject[],
  schema: SchemaJson,
  newFields: NewFieldOptions | undefined,
  consumed: Consumed,
  pending: readonly IntakeObject[],
): Promise<{ validation: Validation; read: IntakeObject[]; copies: IntakeObject[] }> {
  return timed(ctx, 'read_validate', async () => {
    const validator = new BatchValidator(schema, newFields);
    const read: IntakeObject[] = [];
    const seen = new Set<string>();
    const batchObjects = new Map(pending.filter((o) => o.kind === 'batch').map((o) => [o.id, o]));
    for await (const { object, batches } of readObjects(ctx, chosen)) {
      const taken = batches.filter((b) => !seen.has(b.id) && !consumed.has(b.id, object));
      if (read.length > 0 && seen.size + taken.length > ROLL_MAX_BATCH_IDS) break;
      if (taken.length < batches.length) ctx.log.warn({ key: object.key, passed_over: batches.length - taken.length }, 'batches already consumed or already in this roll were passed over');
      for (const batch of taken) {
        seen.add(batch.id);
        measured(ctx, 'validate', () => validator.add(batch));
      }
      read.push(object);
    }
    const taken = new Set(read.map((o) => o.key));
    const copies = read.some((o) => o.kind === 'segment') ? [...seen].flatMap((id) => batchObjects.get(id) ?? []).filter((o) => !taken.has(o.key)) : [];
    if (copies.length > 0) ctx.log.warn({ copies: copies.length, first: copies[0]!.key }, 'batch objects of the one-object layout share ids with batches taken from segments; they go with the roll');
    return { validation: validator.finish(), read, copies };
  });
}

/**
 * Read + validate → (add columns for new fields, then again) → rejects → write → sidecar (above
 * 1,000 batches) → intent → commit (again on a schema change) → delete → report.
 */
async function rollBatches(ctx: RollContext, table: TenantTable, chosen: readonly IntakeObject[], consumed: Consumed, pending: readonly IntakeObject[]): Promise<BatchesResult> {
  const { crash } = ctx.deps;
  let objects: readonly IntakeObject[] = chosen;
  const snapshotId = newSnapshotId();
  const state = { unknownOutcome: false };
  let metadata: TableMetadata = table.loaded.metadata;
  let intent: RollIntent | undefined;
  let attempts = 0;
  let dataFiles: DataFile[] = [];
  let committed = false;
  // A sink adding columns: the columns this roll added, and the schema changes it validated again after.
  const addsColumns = ctx.sink.unknown_fields === 'add_columns';
  const added: Array<NewFieldOptions['added'][number]> = [];
  let addRounds = 0;
  let schemaChanges = 0;

  try {
    for (let round = 1; ; round++) {
      const schema = currentSchema(metadata);
      const { validation, read, copies } = await readAndValidate(ctx, objects, schema, addsColumns ? { added } : undefined, consumed, pending);
      if (round > 1 && read.length !== objects.length) {
        throw new RollError('aborted', 'batches left the intake during the roll (was the sink deleted?); nothing was committed');
      }
      objects = read;
      if (validation.batches.length === 0) {
        // Nothing but batches an earlier commit consumed: their objects go, nothing is committed.
        await timed(ctx, 'delete', () => deleteBatches(ctx, objects.map((o) => o.key)));
        return summarize('idle', null, validation, attempts);
      }
      if (addsColumns && validation.unknownRows.length > 0 && addRounds < ADD_COLUMNS_ROUNDS) {
        // One schema commit for every new field, then the rows are validated again against the
        // schema it left (the owner's too, when the owner changed it first). Fields that get no
        // column leave the table as it was, and their rows stay rejected.
        const outcome = await timed(ctx, 'add_columns', () => addNewColumns(ctx, table, metadata, validation.unknownRows));
        // The same metadata object back: nothing could be added, and nothing changed.
        if (outcome.metadata !== metadata) {
          addRounds++;
          added.push(...outcome.columns);
          metadata = outcome.metadata;
          continue;
        }
      }
      const keys = [...objects, ...copies].map((o) => o.key);
      const segments = objects.filter((o) => o.kind === 'segment').map((o) => o.id);
      await timed(ctx, 'rejects', () => writeRejects(ctx, validation, objects[0]!.id));
      crash.reached('after-rejects');
      const counts = batchCounts(validation);

      if (validation.table === undefined) {
        // Nothing to commit. Reported before the delete: a crash in between leaves batches the
        // next roll rejects again (the ledger is already settled), never a ledger stuck pending.
        await timed(ctx, 'report', () =>
          sendReport(ctx, { outcome: 'empty', ...(intent ? { rollId: intent.roll_id } : {}), snapshotId: null, batches: counts, attempts, startedAt: ctx.startedAt, seconds: elapsed(ctx) }),
        );
        await timed(ctx, 'delete', () => deleteBatches(ctx, keys));
        return summarize('empty', null, validation, attempts);
      }

      const current = { ...table, loaded: { ...table.loaded, metadata } };
      const rows = validation.table;
      const files = await timed(ctx, 'write', () => writeData(ctx, current, rows, schema));
      dataFiles = files;
      crash.reached('after-write');
      // Above 1,000 batches or segments the ids go to a sidecar, written before the intent and the commit.
      const batchesFile = listsInline(counts.length, segments.length) ? undefined : await timed(ctx, 'sidecar', () => writeSidecar(ctx, snapshotId, counts, segments));
      crash.reached('after-sidecar');
      const batchIds = counts.map((c) => c.batch_id);
      intent ??= await timed(ctx, 'intent', () => recordIntent(ctx, snapshotId, batchIds, segments));
      crash.reached('after-intent');
      const appended = await timed(ctx, 'commit', () => appendRoll(ctx, current, { snapshotId, dataFiles: files, schemaId: validation.schemaId, specId: metadata['default-spec-id'], batches: counts, segments, batchesFile }, state));
      attempts += appended.attempts;
      if (appended.kind === 'schema_changed') {
        if (++schemaChanges >= SCHEMA_ROUNDS) throw new RollError('commit_conflict', `the table's schema or partition spec changed ${schemaChanges} times during the roll`);
        ctx.log.info(
          { schema_id: appended.metadata['current-schema-id'], spec_id: appended.metadata['default-spec-id'] },
          'the table schema or partition spec changed during the roll; validating again',
        );
        await discard(ctx, table, dataFiles);
        dataFiles = [];
        metadata = appended.metadata;
        continue;
      }
      committed = true;
      crash.reached('after-commit');
      await timed(ctx, 'delete', () => deleteBatches(ctx, keys));
      crash.reached('before-report');
      const rollId = intent.roll_id;
      await timed(ctx, 'report', () => sendReport(ctx, { outcome: 'committed', rollId, snapshotId, batches: counts, attempts, startedAt: ctx.startedAt, seconds: elapsed(ctx) }));
      crash.reached('after-report');
      return summarize('committed', snapshotId, validation, attempts);
    }
  } catch (error) {
    // Before any commit could have landed, the roll surely failed: close its intent so the
    // batches roll again, and drop the unreferenced data file. After an unknown outcome,
    // leave both for the next roll's invariant step to settle.
    if (!committed && !state.unknownOutcome) {
      await discard(ctx, table, dataFiles);
      if (intent !== undefined) await closeFailed(ctx, intent, error, attempts);
    }
    // A commit that may still land: no other roll may start before it had time to (research/54).
    if (!committed && state.unknownOutcome) ctx.lease.commitInDoubt();
    throw error;
  }
}

function batchCounts(validation: Validation): BatchCount[] {
  return validation.batches.map((b) => ({ batch_id: b.id, rows: b.rows, rejected_rows: b.rejected }));
}

function summarize(outcome: RollResult['outcome'], snapshotId: bigint | null, validation: Validation, attempts: number): BatchesResult {
  const reasons: Partial<Record<RejectsReason, number>> = {};
  for (const b of validation.batches) {
    for (const [reason, n] of Object.entries(b.reasons) as Array<[RejectsReason, number]>) reasons[reason] = (reasons[reason] ?? 0) + n;
  }
  return { outcome, snapshotId, batches: validation.batches.length, rows: validation.rows, rejected: validation.rejected, reasons, attempts };
}

function elapsed(ctx: RollContext): number {
  return (Date.now() - ctx.startedAt.getTime()) / 1000;
}

async function discard(ctx: RollContext, table: TenantTable, dataFiles: readonly DataFile[]): Promise<void> {
  for (const dataFile of dataFiles) {
    try {
      await table.io.delete(dataFile.filePath);
    } catch (error) {
      ctx.log.warn({ err: error, file: dataFile.filePath }, 'could not delete an uncommitted data file');
    }
  }
}

/** Closes the intent as failed (best effort: an intent left open is settled by the next roll). */
async function closeFailed(ctx: RollContext, intent: RollIntent, error: unknown, attempts: number): Promise<void> {
  try {
    await sendReport(ctx, {
      outcome: 'failed',
      rollId: intent.roll_id,
      snapshotId: null,
      batches: [],
      attempts,
      startedAt: ctx.startedAt,
      seconds: elapsed(ctx),
      error: error instanceof Error ? error.message : String(error),
    });
  } catch (reportError) {
    ctx.log.warn({ err: reportError }, 'could not close the failed roll intent; the next roll will');
  }
}

/** A sink marked table_missing whose table is back: active again, so the policy rolls it. */
async function markActive(ctx: RollContext): Promise<void> {
  try {
    await ctx.deps.api.setState(ctx.sink.id, { lease_id: ctx.lease.id, state: 'active', reason: 'the table exists again' });
    ctx.log.info('the table exists again; the sink is active');
  } catch (error) {
    if (isApiRefusal(error, 'lease_lost')) throw new RollError('lease_lost', error.message);
    throw apiFailure(error);
  }
}
