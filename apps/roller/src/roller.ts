import { setTimeout as sleep } from 'node:timers/promises';
import { ROLL_MAX_BATCHES, type InternalSink } from '@tablemere/contracts';
import type { RollDeps } from './roll/context.ts';
import { type RollAgain, rollSink, type SinkRollSummary, upkeepSink } from './run-sink.ts';
import { upkeepDue } from './upkeep/policy.ts';

export interface RollerOptions {
  rollerId: string;
  leaseSeconds: number;
  concurrency: number;
  tickSeconds: number;
  surveySeconds: number;
  /** Upkeep of each sink's table at most this often (0: never from the loop). */
  upkeepSeconds: number;
}

/** Longest a failing sink waits before it is tried again. */
const MAX_BACKOFF_MS = 10 * 60_000;
/**
 * Longest it waits after a failure of reach (API, store or catalog out of reach, a commit's
 * outcome unknown): those end when the network heals, and the sink should roll within a
 * tick or so of it, not after a backoff grown during the partition (research/54).
 */
const MAX_REACH_BACKOFF_MS = 30_000;
const REACH_FAILURES: ReadonlySet<string> = new Set(['api_error', 'store_unavailable', 'catalog_unavailable', 'commit_unknown']);
/** How often a sink that just rolled a fleet's worth is asked whether it is due again, until the next tick would. */
const HOT_POLL_MS = 1000;

/**
 * The service loop. Every tick asks the API for due sinks (the API decides from the ledger,
 * so idle sinks cost nothing) and starts rolls in free slots, at most `concurrency` at once
 * across ticks; a roll longer than a tick keeps its slot. A sink still due when its roll ends
 * rolls again at once under the lease it holds (see `again`), unless another due sink waits
 * for a slot: then the slot goes back to the next tick. Every survey lists all sinks for the
 * lag gauges, retries sinks whose table was missing, and queues the sinks due for table
 * upkeep, which start in slots rolls leave free. A failing sink backs off exponentially; a
 * failed upkeep waits a whole interval. `enabled: false` from the API idles the loop.
 */
export class Roller {
  private readonly running = new Map<string, Promise<void>>();
  /** Sinks whose left lease (the API was out of reach when it was given back) is being given back now. */
  private readonly settling = new Set<string>();
  private readonly backoff = new Map<string, { until: number; failures: number }>();
  /** Sinks the last survey found due for upkeep, started in slots rolls leave free. */
  private readonly upkeepQueue = new Map<string, InternalSink>();
  /** When this process last started an upkeep of each sink: a failing one waits a whole interval. */
  private readonly upkeepStarted = new Map<string, number>();
  private readonly stopping = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private lastSurvey = 0;
  private enabled: boolean | undefined;
  private ticking = false;
  private closed = false;
  /** Sinks that took a fleet's worth in a roll, until a tick after it: asked whether due every second (see `again`). */
  private readonly hotUntil = new Map<string, number>();
  /** Due sinks the last tick could not start for want of a free slot. */
  private waiting = 0;
  /** When the last tick reached the API; null before the first. */
  lastTickAt: Date | null = null;

  constructor(
    private readonly deps: RollDeps,
    private readonly options: RollerOptions,
  ) {}

  get inFlight(): number {
    return this.running.size;
  }

  start(): void {
    const loop = async () => {
      await this.tick();
      if (!this.closed) this.timer = setTimeout(loop, this.options.tickSeconds * 1000);
    };
    this.timer = setTimeout(loop, 0);
  }

  /** One tick: due sinks into free slots. Exposed for tests; never throws. */
  async tick(): Promise<void> {
    if (this.ticking || this.closed) return;
    this.ticking = true;
    try {
      const list = await this.deps.api.listSinks({ due: true });
      this.lastTickAt = new Date();
      this.deps.metrics.lastTick.set(this.lastTickAt.getTime() / 1000);
      if (list.enabled !== this.enabled) {
        this.deps.log.info({ enabled: list.enabled }, list.enabled ? 'sinks are enabled; rolling' : 'sinks are disabled; idling');
        this.enabled = list.enabled;
      }
      if (!list.enabled) return;
      const candidates = list.sinks;
      if (Date.now() - this.lastSurvey >= this.options.surveySeconds * 1000) candidates.push(...(await this.survey()));
      let waiting = 0;
      for (const sink of candidates) {
        if (!this.free(sink)) continue;
        if (this.running.size < this.options.concurrency) this.launch(sink);
        else waiting++;
      }
      this.waiting = waiting;
      this.settleLeftLeases();
      // Upkeep only in slots rolls leave free: a lagging sink matters more than a slow scan.
      for (const sink of this.upkeepQueue.values()) {
        if (this.running.size >= this.options.concurrency) break;
        if (!this.free(sink)) continue;
        this.upkeepQueue.delete(sink.id);
        this.launchUpkeep(sink);
      }
    } catch (error) {
      this.deps.log.warn({ err: error }, 'tick failed; trying again next tick');
    } finally {
      this.ticking = false;
    }
  }

  /**
   * Every sink: lag gauges for all of them, and the table_missing ones with pending batches
   * (the API never calls those due) to see whether their table is back.
   */
  private async survey(): Promise<InternalSink[]> {
    const list = await this.deps.api.listSinks();
    this.lastSurvey = Date.now();
    const asOf = Date.parse(list.as_of);
    this.deps.metrics.setLag(
      list.sinks.map((s) => ({
        id: s.id,
        batches: s.pending.batches,
        bytes: s.pending.bytes,
        seconds: s.pending.oldest_received_at === null ? 0 : Math.max(0, (asOf - Date.parse(s.pending.oldest_received_at)) / 1000),
      })),
      true,
    );
    this.deps.metrics.setPolicies(list.sinks);
    this.deps.metrics.setFailing(
      list.sinks.map((s) => ({ id: s.id, attempts: s.roll_error?.attempts ?? null })),
      true,
    );
    const now = new Date(list.as_of);
    const interval = this.options.upkeepSeconds;
    this.upkeepQueue.clear();
    for (const sink of list.sinks) {
      const startedHere = this.upkeepStarted.get(sink.id) ?? 0;
      if (sink.state === 'active' && upkeepDue(sink, now, interval) && Date.now() - startedHere >= interval * 1000) this.upkeepQueue.set(sink.id, sink);
    }
    return list.sinks.filter((s) => s.state === 'table_missing' && s.pending.batches > 0);
  }

  /**
   * The API answers again: the leases left when it did not, of sinks this tick did not start
   * (a due one was just started and takes its lease again), are given back, with the failures
   * it could not be told of. In the background; each only once its job has certainly stopped.
   */
  private settleLeftLeases(): void {
    const left = this.deps.leftLeases;
    if (left === undefined) return;
    for (const sinkId of left.sinkIds()) {
      if (this.running.has(sinkId) || this.settling.has(sinkId)) continue;
      this.settling.add(sinkId);
      void left.settle(sinkId).finally(() => this.settling.delete(sinkId));
    }
  }

  /** Not running here, not backing off, and not leased by another roller. */
  private free(sink: InternalSink): boolean {
    if (this.running.has(sink.id) || this.settling.has(sink.id) || this.backedOff(sink.id)) return false;
    return sink.lease === null || sink.lease.roller_id === this.options.rollerId;
  }

  private backedOff(sinkId: string): boolean {
    const entry = this.backoff.get(sinkId);
    return entry !== undefined && Date.now() < entry.until;
  }

  /**
   * After a roll that went through: the same sink again, as the API lists it now, while the
   * roll found batches to take, no other due sink waits for a slot, the loop is not stopping,
   * and the API still calls the sink due (the policy is the API's alone; sinks disabled, none is).
   * A sink that took a fleet's worth in a roll (at least the 1,000 batches that make a sink
   * due) is hot for a tick from that roll's end: left not due, typically by a roll that took
   * its whole backlog or by the small roll after it, it is asked again every second meanwhile,
   * since it is due again within seconds and the tick would leave the roller idle until then
   * (up to 10 s a time under a fleet, research/40).
   */
  private readonly again: RollAgain = async (rolled) => {
    if (rolled.batches >= ROLL_MAX_BATCHES) this.hotUntil.set(rolled.sink, Date.now() + this.options.tickSeconds * 1000);
    const until = this.hotUntil.get(rolled.sink) ?? 0;
    for (;;) {
      if (this.closed) return { stop: 'stopping' };
      if (rolled.outcome === 'idle') return { stop: 'nothing_pending' };
      if (this.waiting > 0) return { stop: 'slot_wanted' };
      const next = await this.dueNow(rolled.sink);
      if (!('stop' in next) || next.stop !== 'not_due' || Date.now() + HOT_POLL_MS >= until) {
        if (Date.now() >= until) this.hotUntil.delete(rolled.sink);
        return next;
      }
      await sleep(HOT_POLL_MS, undefined, { signal: this.stopping.signal }).catch(() => undefined);
    }
  };

  /** The sink as the API lists it now if it is due, or why not. */
  private async dueNow(sinkId: string): Promise<InternalSink | { stop: string }> {
    try {
      const list = await this.deps.api.listSinks({ due: true, sink: sinkId });
      return (list.enabled ? list.sinks[0] : undefined) ?? { stop: 'not_due' };
    } catch (error) {
      this.deps.log.warn({ sink: sinkId, err: error }, 'could not ask whether the sink is still due; the next tick will');
      return { stop: 'api_error' };
    }
  }

  private launch(sink: InternalSink): void {
    const run = rollSink(this.deps, sink, { rollerId: this.options.rollerId, leaseSeconds: this.options.leaseSeconds, stop: this.stopping.signal }, this.again)
      .then((summary) => this.settle(summary))
      .finally(() => this.running.delete(sink.id));
    this.running.set(sink.id, run);
  }

  private launchUpkeep(sink: InternalSink): void {
    this.upkeepStarted.set(sink.id, Date.now());
    const run = upkeepSink(this.deps, sink, { rollerId: this.options.rollerId, leaseSeconds: this.options.leaseSeconds, stop: this.stopping.signal })
      .then(() => undefined)
      .finally(() => this.running.delete(sink.id));
    this.running.set(sink.id, run);
  }

  private settle(summary: SinkRollSummary): void {
    if (summary.status !== 'failed') {
      this.backoff.delete(summary.sink);
      return;
    }
    const failures = (this.backoff.get(summary.sink)?.failures ?? 0) + 1;
    const cap = REACH_FAILURES.has(summary.reason) ? MAX_REACH_BACKOFF_MS : MAX_BACKOFF_MS;
    const delay = Math.min(cap, this.options.tickSeconds * 1000 * 2 ** (failures - 1));
    this.backoff.set(summary.sink, { until: Date.now() + delay, failures });
  }

  /**
   * Stops ticking and waits up to `graceMs` for running rolls to finish; then aborts them at
   * their next safe point (before an intent or a commit; a commit that happened is always
   * deleted and reported) and waits for them to release their leases.
   */
  async stop(graceMs: number): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    const all = () => Promise.allSettled([...this.running.values()]);
    let timeout: NodeJS.Timeout | undefined;
    const finished = await Promise.race([all().then(() => true), new Promise<boolean>((resolve) => (timeout = setTimeout(() => resolve(false), graceMs)))]);
    clearTimeout(timeout);
    this.stopping.abort();
    if (!finished) await all();
  }
}
