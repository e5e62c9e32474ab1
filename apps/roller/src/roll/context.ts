import type { InternalSink } from '@tablemere/contracts';
import type { ObjectStore } from '@tablemere/store';
import type { Logger } from 'pino';
import type { CrashHook } from '../crash.ts';
import { RollError } from '../errors.ts';
import type { InternalApi } from '../internal-api.ts';
import type { LeftLeases, SinkLease } from '../lease.ts';
import type { UpkeepSettings } from '../config.ts';
import type { RollerMetrics } from '../metrics.ts';
import type { TenantCatalogs } from './reload.ts';
import type { SweepSchedule } from './sweep.ts';

/** What every roll shares with the process: clients, caches, metrics and settings. */
export interface RollDeps {
  api: InternalApi;
  /**
   * The sink's intake store: its bucket through the platform's store credentials, or (a
   * warehouse's sink_bucket) through the warehouse's own.
   */
  intake(sink: InternalSink): ObjectStore;
  catalogs: TenantCatalogs;
  /** Leases this process could not give back (the API out of reach), to take again or give back once it answers. */
  leftLeases?: LeftLeases;
  metrics: RollerMetrics;
  crash: CrashHook;
  log: Logger;
  sweeps: SweepSchedule;
  settings: {
    rejectsRetentionSeconds: number;
    /** Least lease time left to record an intent or commit. */
    leaseMarginMs: number;
    upkeep: UpkeepSettings;
  };
}

/** One roll (or upkeep run) of one sink under its lease, handed to every step. */
export interface RollContext {
  readonly sink: InternalSink;
  readonly lease: SinkLease;
  readonly deps: RollDeps;
  /** Carries `sink` on every line. */
  readonly log: Logger;
  /** The sink's intake bucket. */
  readonly intake: ObjectStore;
  readonly startedAt: Date;
  /** Aborts when the lease is lost or the process stops; steps check it between acts. */
  readonly signal: AbortSignal;
  /** Milliseconds spent per step, for the roll's log line. */
  readonly phases: Record<string, number>;
}

/** Runs one step, says so at debug level, and adds its wall time to `ctx.phases[name]`. */
export async function timed<T>(ctx: RollContext, name: string, step: () => Promise<T>): Promise<T> {
  ctx.log.debug({ step: name }, 'step');
  const started = performance.now();
  try {
    return await step();
  } finally {
    ctx.phases[name] = (ctx.phases[name] ?? 0) + performance.now() - started;
  }
}

/** Runs a synchronous part of a step and adds its time to `ctx.phases[name]`, quietly. */
export function measured<T>(ctx: RollContext, name: string, part: () => T): T {
  const started = performance.now();
  try {
    return part();
  } finally {
    ctx.phases[name] = (ctx.phases[name] ?? 0) + performance.now() - started;
  }
}

/** Throws the abort reason (a RollError) when the roll must stop. */
export function checkpoint(ctx: RollContext): void {
  if (!ctx.signal.aborted) return;
  const reason: unknown = ctx.signal.reason;
  throw reason instanceof RollError ? reason : new RollError('aborted', 'the roller is stopping');
}
