import { toStorableText, type InternalSink } from '@tablemere/contracts';
import { type FailureReason, RollError } from './errors.ts';
import { isApiRefusal } from './internal-api.ts';
import { SinkLease, unreachable } from './lease.ts';
import type { RollDeps, RollContext } from './roll/context.ts';
import { runRoll, type RollResult } from './roll/pipeline.ts';
import { runUpkeep, type UpkeepResult, upkeepJson } from './upkeep/pipeline.ts';

export interface SinkRollOptions {
  rollerId: string;
  leaseSeconds: number;
  /** Aborts every roll at its next safe point (the process is stopping). */
  stop: AbortSignal;
}

/** What one attempt to roll a sink came to, for the loop, the operator command and logs. */
export type SinkRollSummary =
  | ({ sink: string; status: 'rolled'; seconds: number; phases: Record<string, number> } & RollResult)
  /** Another roller holds the lease. */
  | { sink: string; status: 'busy'; holder: string | null }
  | { sink: string; status: 'failed'; reason: FailureReason; message: string; seconds: number };

/** What one job run under a held lease came to: its value, or why it did not finish. */
type JobOutcome<T> = { status: 'done'; value: T; seconds: number; phases: Record<string, number> } | { status: 'failed'; error: unknown; seconds: number };

/** The lease already timed (and the sink with the run of failures the lease's earlier roll left), or an acquisition that did not give one. */
type Leased = { lease: SinkLease; started: number; sink: InternalSink } | { status: 'busy'; holder: string | null } | { status: 'failed'; error: unknown; seconds: number };

/**
 * Takes the sink's lease: rolls and upkeep runs alike, so the two never overlap on one sink in
 * any process. A lease this process left when the API was out of reach is taken again, and the
 * failure the API could not be told of then is recorded first (the sink's `roll_error` as it is now).
 */
async function acquire(deps: RollDeps, sink: InternalSink, options: SinkRollOptions): Promise<Leased> {
  const started = Date.now();
  try {
    const lease = await SinkLease.acquire(deps.api, sink.id, options.rollerId, options.leaseSeconds, deps.log.child({ sink: sink.id }), deps.leftLeases);
    if (lease === undefined) return { status: 'busy', holder: sink.lease?.roller_id ?? null };
    const recorded = await lease.tellUnrecorded();
    if (recorded === undefined) return { lease, started, sink };
    deps.metrics.setFailing([{ id: sink.id, attempts: recorded?.attempts ?? null }], false);
    return { lease, started, sink: { ...sink, roll_error: recorded } };
  } catch (error) {
    return { status: 'failed', error, seconds: (Date.now() - started) / 1000 };
  }
}

/** Runs `job` on the sink under a lease this process holds, with a fresh context. Never throws. */
async function leasedJob<T>(deps: RollDeps, sink: InternalSink, lease: SinkLease, options: SinkRollOptions, started: number, job: (ctx: RollContext) => Promise<T>): Promise<JobOutcome<T>> {
  const seconds = () => (Date.now() - started) / 1000;
  deps.metrics.inFlight.inc();
  const ctx: RollContext = {
    sink,
    lease,
    deps,
    log: deps.log.child({ sink: sink.id }),
    intake: deps.intake(sink),
    startedAt: new Date(started),
    signal: AbortSignal.any([lease.signal, options.stop]),
    phases: {},
  };
  try {
    const value = await job(ctx);
    return { status: 'done', value, seconds: seconds(), phases: roundedPhases(ctx.phases) };
  } catch (error) {
    if (error instanceof RollError && error.reason === 'table_missing') await markTableMissing(ctx, error);
    return { status: 'failed', error, seconds: seconds() };
  } finally {
    deps.metrics.inFlight.dec();
  }
}

/** Leases the sink, runs one job under the lease, and gives it back. */
async function underLease<T>(deps: RollDeps, sink: InternalSink, options: SinkRollOptions, job: (ctx: RollContext) => Promise<T>): Promise<JobOutcome<T> | { status: 'busy'; holder: string | null }> {
  const leased = await acquire(deps, sink, options);
  if ('status' in leased) return leased;
  try {
    return await leasedJob(deps, sink, leased.lease, options, leased.started, job);
  } finally {
    await leased.lease.release(deps.settings.leaseMarginMs);
  }
}

/** One roll whose summary says it went through. */
export type RolledSummary = Extract<SinkRollSummary, { status: 'rolled' }>;
type FailedSummary = Extract<SinkRollSummary, { status: 'failed' }>;

/**
 * Whether to roll the sink again at once, under the lease still held: the sink as the API
 * lists it now (still due), or why not. Asked after every roll that went through.
 */
export type RollAgain = (rolled: RolledSummary) => Promise<InternalSink | { stop: string }>;

/**
 * Leases the sink, rolls it, and gives the lease back: the unit both the tick loop and the
 * operator command run. With `again`, a roll that went through is followed at once by another
 * under the same lease (renewed all along, so no other roller can race it) for as long as
 * `again` names the sink, and the process is not stopping, and the lease is not lost, and no
 * roll failed: a backlog larger than one roll drains back to back, not one roll per tick.
 * Never throws; a failure is a summary with its reason, logged and counted. A missing table
 * marks the sink table_missing. The summary is the last roll's.
 */
export async function rollSink(deps: RollDeps, sink: InternalSink, options: SinkRollOptions, again?: RollAgain): Promise<SinkRollSummary> {
  const leased = await acquire(deps, sink, options);
  if ('status' in leased) return leased.status === 'busy' ? { sink: sink.id, status: 'busy', holder: leased.holder } : rollFailed(deps, sink.id, leased.error, leased.seconds);
  const { lease } = leased;
  const log = deps.log.child({ sink: sink.id });
  const interrupted = () => (options.stop.aborted ? 'stopping' : lease.signal.aborted ? 'lease_lost' : undefined);
  /** The sink to roll next under this lease, or why none. */
  const follow = async (summary: RolledSummary | FailedSummary): Promise<InternalSink | { stop: string }> => {
    if (summary.status === 'failed' || again === undefined || interrupted()) return { stop: interrupted() ?? (summary.status === 'failed' ? 'failed' : 'one_roll') };
    const next = await again(summary);
    const why = interrupted();
    return why === undefined ? next : { stop: why };
  };
  let current = leased.sink;
  let started = leased.started;
  try {
    for (let rolls = 1; ; rolls++) {
      const summary = await rollOnce(deps, current, lease, options, started);
      const next = await follow(summary);
      if ('stop' in next) {
        if (rolls > 1) log.info({ rolls, ended: next.stop }, `${rolls} rolls back to back under one lease; ended: ${next.stop}`);
        return summary;
      }
      deps.metrics.backToBack.inc();
      log.info(
        { back_to_back: rolls, due_reasons: next.due_reasons, pending_batches: next.pending.batches, pending_bytes: next.pending.bytes },
        'still due after its roll; rolling again under the same lease',
      );
      current = next;
      started = Date.now();
    }
  } finally {
    await lease.release(deps.settings.leaseMarginMs);
  }
}

/** One roll of the sink under the lease held, its outcome reported to the API, logged and counted. */
async function rollOnce(deps: RollDeps, sink: InternalSink, lease: SinkLease, options: SinkRollOptions, started: number): Promise<RolledSummary | FailedSummary> {
  const outcome = await leasedJob(deps, sink, lease, options, started, async (ctx) => {
    try {
      const result = await runRoll(ctx);
      if (sink.roll_error !== null) await recordRollError(ctx, null);
      return result;
    } catch (error) {
      await recordRollError(ctx, error);
      throw error;
    }
  });
  if (outcome.status === 'failed') return rollFailed(deps, sink.id, outcome.error, outcome.seconds);
  const log = deps.log.child({ sink: sink.id });
  const { value: result, seconds: took, phases } = outcome;
  deps.metrics.rollSeconds.observe({ outcome: result.outcome }, took);
  deps.metrics.rolls.inc({ outcome: result.outcome });
  deps.metrics.rows.inc(result.rows);
  deps.metrics.batches.inc(result.batches);
  for (const [reason, n] of Object.entries(result.reasons)) deps.metrics.rejects.inc({ reason }, n);
  if (result.left === 0) deps.metrics.setLag([{ id: sink.id, batches: 0, bytes: 0, seconds: 0 }], false);
  log.info(
    {
      outcome: result.outcome,
      batches: result.batches,
      rows: result.rows,
      rejected_rows: result.rejected,
      reasons: result.reasons,
      snapshot_id: result.snapshotId?.toString() ?? null,
      attempts: result.attempts,
      seconds: took,
      settled: result.settled,
      abandoned: result.abandoned,
      left: result.left,
      swept: result.swept,
      phases_ms: phases,
    },
    result.outcome === 'committed' ? `roll committed ${result.rows} rows from ${result.batches} batches` : `roll ${result.outcome}`,
  );
  return { sink: sink.id, status: 'rolled', seconds: took, phases, ...result };
}

function rollFailed(deps: RollDeps, sinkId: string, error: unknown, seconds: number): FailedSummary {
  const summary = failed(deps.log.child({ sink: sinkId }), sinkId, error, seconds);
  deps.metrics.failed(summary.reason);
  deps.metrics.rolls.inc({ outcome: 'failed' });
  deps.metrics.rollSeconds.observe({ outcome: 'failed' }, seconds);
  return summary;
}

/** What one upkeep run of a sink's table came to. */
export type SinkUpkeepSummary =
  | ({ sink: string; status: 'upkept'; seconds: number; phases: Record<string, number> } & UpkeepResult)
  | { sink: string; status: 'busy'; holder: string | null }
  | { sink: string; status: 'failed'; reason: FailureReason; message: string; seconds: number };

/**
 * Leases the sink and runs one upkeep of its table (compaction, expiry, orphan files) under the same lease a
 * roll takes. Never throws; logged, counted, and reported to the API even when it failed.
 */
export async function upkeepSink(deps: RollDeps, sink: InternalSink, options: SinkRollOptions): Promise<SinkUpkeepSummary> {
  const outcome = await underLease(deps, sink, options, runUpkeep);
  if (outcome.status === 'busy') return { sink: sink.id, status: 'busy', holder: outcome.holder };
  const log = deps.log.child({ sink: sink.id, job: 'upkeep' });
  if (outcome.status === 'failed') {
    const summary = failed(log, sink.id, outcome.error, outcome.seconds);
    deps.metrics.upkeeps.inc({ outcome: 'failed' });
    deps.metrics.upkeepSeconds.observe(outcome.seconds);
    return summary;
  }
  const { value: result, seconds: took, phases } = outcome;
  deps.metrics.upkeeps.inc({ outcome: result.outcome });
  deps.metrics.upkeepSeconds.observe(took);
  deps.metrics.upkeepRewritten.inc(result.rewritten.files);
  deps.metrics.upkeepRewrittenBytes.inc(Number(result.rewritten.bytes));
  deps.metrics.upkeepExpired.inc(result.expiredSnapshots);
  for (const [kind, n] of Object.entries(result.deletedFiles)) deps.metrics.upkeepDeletedFiles.inc({ kind }, n);
  deps.metrics.upkeepDeletedFiles.inc({ kind: 'orphan' }, result.orphans.deleted);
  deps.metrics.tableFiles.set({ sink: sink.id, kind: 'data' }, result.files.dataAfter);
  deps.metrics.tableFiles.set({ sink: sink.id, kind: 'manifest' }, result.files.manifestsAfter);
  log.info({ ...upkeepJson(result), seconds: took, phases_ms: phases }, `upkeep ${result.outcome}`);
  return { sink: sink.id, status: 'upkept', seconds: took, phases, ...result };
}

function roundedPhases(phases: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(phases).map(([name, ms]) => [name, Math.round(ms)]));
}

/** A summary as one JSON object with snake_case keys and snapshot ids as strings. */
export function summaryJson(summary: SinkRollSummary | SinkUpkeepSummary): Record<string, unknown> {
  if (summary.status === 'upkept') return { sink: summary.sink, status: summary.status, ...upkeepJson(summary), seconds: summary.seconds, phases_ms: summary.phases };
  if (summary.status !== 'rolled') return { ...summary };
  return {
    sink: summary.sink,
    status: summary.status,
    outcome: summary.outcome,
    snapshot_id: summary.snapshotId?.toString() ?? null,
    batches: summary.batches,
    rows: summary.rows,
    rejected_rows: summary.rejected,
    reasons: summary.reasons,
    attempts: summary.attempts,
    settled: summary.settled,
    abandoned: summary.abandoned,
    left: summary.left,
    swept: summary.swept,
    seconds: summary.seconds,
    phases_ms: summary.phases,
  };
}

function failed(log: RollDeps['log'], sinkId: string, error: unknown, took: number): { sink: string; status: 'failed'; reason: FailureReason; message: string; seconds: number } {
  const reason: FailureReason = error instanceof RollError ? error.reason : 'internal';
  const message = error instanceof Error ? error.message : String(error);
  const expected = reason === 'table_missing' || reason === 'aborted' || reason === 'lease_lost' || reason === 'delete_failed';
  log[expected ? 'warn' : 'error']({ reason, seconds: took, ...(expected ? {} : { err: error }) }, `${log.bindings().job ?? 'roll'} failed: ${message}`);
  return { sink: sinkId, status: 'failed', reason, message, seconds: took };
}

/** Failures that say nothing about the sink: the roll was stopped, or another roller took over. */
const NOT_THE_SINKS: readonly FailureReason[] = ['aborted', 'lease_lost'];

/**
 * Tells the API how the roll went while the lease is still ours: a failure counts into the
 * sink's run of failures (shown on the sink until a roll goes through), a good roll ends the
 * run. Best effort: a roll's own outcome never depends on it. A failure the API could not be
 * told of (out of reach) stays on the lease, told before the lease is given back or, if that
 * fails too, once the API answers again (LeftLeases).
 */
async function recordRollError(ctx: RollContext, error: unknown): Promise<void> {
  const reason: FailureReason | null = error === null ? null : error instanceof RollError ? error.reason : 'internal';
  if (reason !== null && NOT_THE_SINKS.includes(reason)) return;
  const message = error instanceof Error ? error.message : String(error);
  try {
    const { roll_error: recorded } = await ctx.deps.api.setRollError(ctx.sink.id, {
      lease_id: ctx.lease.id,
      error: reason === null ? null : { code: reason, message: toStorableText(message, 4000) || reason },
    });
    ctx.deps.metrics.setFailing([{ id: ctx.sink.id, attempts: recorded?.attempts ?? null }], false);
    if (recorded === null) ctx.log.info({ failed_rolls: ctx.sink.roll_error?.attempts, since: ctx.sink.roll_error?.since }, 'sink rolls again after failed rolls');
    else ctx.log.warn({ reason: recorded.code, since: recorded.since, failed_rolls: recorded.attempts }, `sink stalled: ${recorded.attempts} failed rolls in a row since ${recorded.since}`);
  } catch (recordError) {
    if (reason !== null && unreachable(recordError)) ctx.lease.unrecorded = { code: reason, message: toStorableText(message, 4000) || reason };
    ctx.log.warn({ err: recordError }, 'could not record how the roll went on the sink');
  }
}

/** The sink's table is gone: say so on the sink, so its owner sees why nothing rolls. */
async function markTableMissing(ctx: RollContext, error: RollError): Promise<void> {
  if (ctx.sink.state === 'table_missing') return;
  try {
    await ctx.deps.api.setState(ctx.sink.id, { lease_id: ctx.lease.id, state: 'table_missing', reason: toStorableText(error.message, 1000) });
  } catch (stateError) {
    if (!isApiRefusal(stateError, 'lease_lost')) ctx.log.warn({ err: stateError }, 'could not mark the sink table_missing');
  }
}
