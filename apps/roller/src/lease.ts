import type { RollErrorRequest, RollErrorResult } from '@tablemere/contracts';
import type { Logger } from 'pino';
import { RollError } from './errors.ts';
import { type InternalApi, InternalApiError, isApiRefusal } from './internal-api.ts';

/** A roll's failure as the API records it (PUT /internal/sinks/{id}/roll-error). */
export type RollFailure = NonNullable<RollErrorRequest['error']>;

/** Whether the API was out of reach (no answer in the bound, or a 5xx), as opposed to a refusal. */
export function unreachable(error: unknown): boolean {
  return error instanceof InternalApiError && error.kind === 'unavailable';
}

/**
 * Records `failure` on the sink under `leaseId` (the lease must not have been taken over).
 * Returns the sink's run of failures as recorded, or undefined when the lease is no longer
 * ours (the failure cannot be recorded through this route then). Throws when the API is out of reach.
 */
async function tellFailure(api: InternalApi, sinkId: string, leaseId: string, failure: RollFailure): Promise<RollErrorResult['roll_error'] | undefined> {
  try {
    return (await api.setRollError(sinkId, { lease_id: leaseId, error: failure })).roll_error;
  } catch (error) {
    if (isApiRefusal(error, 'lease_lost') || isApiRefusal(error, 'sink_not_found')) return undefined;
    throw error;
  }
}

/**
 * A lease this process could not give back when its job ended, because the API was out of
 * reach (research/54). Only this process knows its lease id, so only it can take the lease
 * again (a renewal with that id, which the API grants while nobody took the lease over) or give
 * it back; no other roller's rolls are affected, and none waits longer than the lease's TTL.
 */
export interface LeftLease {
  sinkId: string;
  leaseId: string;
  /** The failure of the roll under it that the API could not be told of, recorded first when it answers again. */
  failure: RollFailure | undefined;
  /**
   * From when the job under it has certainly stopped: it ended, and a commit it sent last has
   * had the lease margin to land or fail, as a takeover after expiry gives it.
   */
  quietAt: number;
}

/**
 * The leases left this way, by sink. The service loop takes one again when its sink is due
 * (SinkLease.acquire) and gives the others back as soon as the API answers (`settle`), each
 * only once `quietAt` has passed, so two jobs of one sink never overlap.
 */
export class LeftLeases {
  private readonly leases = new Map<string, LeftLease>();

  constructor(
    private readonly api: InternalApi,
    private readonly log: Logger,
    /** The lease margin: a job's commit sent this long before its lease ran out is taken to have landed or failed. */
    private readonly quietMs: number,
  ) {}

  add(sinkId: string, leaseId: string, failure: RollFailure | undefined): void {
    this.leases.set(sinkId, { sinkId, leaseId, failure, quietAt: Date.now() + this.quietMs });
  }

  get(sinkId: string): LeftLease | undefined {
    return this.leases.get(sinkId);
  }

  delete(sinkId: string): void {
    this.leases.delete(sinkId);
  }

  sinkIds(): string[] {
    return [...this.leases.keys()];
  }

  /**
   * Records the left failure and gives the lease back, once quiet; the entry goes once done,
   * or once the lease is no longer ours. Never throws: with the API still out of reach the
   * entry stays for the next try.
   */
  async settle(sinkId: string): Promise<void> {
    const left = this.leases.get(sinkId);
    if (left === undefined || Date.now() < left.quietAt) return;
    const log = this.log.child({ sink: sinkId });
    try {
      if (left.failure !== undefined) {
        const recorded = await tellFailure(this.api, sinkId, left.leaseId, left.failure);
        if (recorded) log.warn({ reason: recorded.code, since: recorded.since, failed_rolls: recorded.attempts }, 'recorded a failed roll the API could not be told of when it failed');
        else log.warn({ reason: left.failure.code }, 'a failed roll the API could not be told of is not recorded: its lease was taken over meanwhile');
        left.failure = undefined;
      }
      const { released } = await this.api.releaseLease(sinkId, left.leaseId);
      this.leases.delete(sinkId);
      log.info({ released }, released ? 'gave back the lease left when the API was out of reach' : 'the lease left when the API was out of reach had been taken over or had run out');
    } catch (error) {
      if (unreachable(error)) log.debug({ err: error }, 'the API is still out of reach; the left lease is kept');
      else {
        this.leases.delete(sinkId);
        log.warn({ err: error }, 'could not give back the lease left when the API was out of reach; it expires on its own');
      }
    }
  }
}

/**
 * One sink's lease while a roll runs: renewed every third of its time to live, and its
 * `signal` aborts when it is lost (taken over, or not renewed in time). Expiry is tracked on
 * this process's clock from the moment each request was sent, so it errs on the early side.
 */
export class SinkLease {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  private validUntil: number;
  private released = false;
  /** A failure of a roll under this lease that the API could not be told of yet: told before the lease is given back. */
  unrecorded: RollFailure | undefined;
  /** When a roll under this lease last gave up on a commit whose outcome it does not know. */
  private inDoubtAt: number | undefined;

  private constructor(
    private readonly api: InternalApi,
    readonly sinkId: string,
    readonly id: string,
    private readonly rollerId: string,
    private readonly ttlSeconds: number,
    sentAt: number,
    private readonly log: Logger,
    private readonly left: LeftLeases | undefined,
  ) {
    this.validUntil = sentAt + ttlSeconds * 1000;
    this.timer = setInterval(() => void this.renew(), (ttlSeconds * 1000) / 3);
    this.timer.unref();
  }

  /**
   * Takes the sink's lease; undefined when another roller holds it, or when this process left
   * its lease of the sink (the API out of reach) and the job under it is not certainly stopped
   * yet. A left lease that is quiet is taken again by renewing it (same id, so no other roller
   * can have taken it meanwhile), with the failure the API could not be told of in `unrecorded`.
   */
  static async acquire(api: InternalApi, sinkId: string, rollerId: string, ttlSeconds: number, log: Logger, left?: LeftLeases): Promise<SinkLease | undefined> {
    const kept = left?.get(sinkId);
    if (kept !== undefined) {
      if (Date.now() < kept.quietAt) return undefined;
      const sentAt = Date.now();
      try {
        await api.lease(sinkId, { roller_id: rollerId, ttl_seconds: ttlSeconds, lease_id: kept.leaseId });
        left!.delete(sinkId);
        log.info({ lease_id: kept.leaseId, unrecorded_failure: kept.failure?.code ?? null }, 'took back the lease left when the API was out of reach');
        const lease = new SinkLease(api, sinkId, kept.leaseId, rollerId, ttlSeconds, sentAt, log, left);
        lease.unrecorded = kept.failure;
        return lease;
      } catch (error) {
        if (!isApiRefusal(error, 'lease_lost') && !isApiRefusal(error, 'sink_not_found')) throw error;
        // Taken over, or run out and taken, since: a new lease like any roller's. The failure
        // cannot be recorded under a lease that is not ours.
        left!.delete(sinkId);
        log.warn({ unrecorded_failure: kept.failure?.code ?? null }, 'the lease left when the API was out of reach is no longer ours');
      }
    }
    const sentAt = Date.now();
    try {
      const lease = await api.lease(sinkId, { roller_id: rollerId, ttl_seconds: ttlSeconds });
      return new SinkLease(api, sinkId, lease.lease_id, rollerId, ttlSeconds, sentAt, log, left);
    } catch (error) {
      if (isApiRefusal(error, 'lease_held')) return undefined;
      throw error;
    }
  }

  /** Aborts when the lease is lost; the reason is a RollError('lease_lost'). */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /**
   * Throws unless the lease is surely still ours for `marginMs` more: called before acts
   * another roller must never overlap with (recording an intent, committing).
   */
  assertHeld(marginMs: number): void {
    if (this.controller.signal.aborted) throw this.controller.signal.reason;
    if (Date.now() + marginMs > this.validUntil) {
      throw new RollError('lease_lost', `the lease of ${this.sinkId} would expire within ${Math.round(marginMs / 1000)} s and was not renewed`);
    }
  }

  private async renew(): Promise<void> {
    if (this.released || this.controller.signal.aborted) return;
    const sentAt = Date.now();
    try {
      await this.api.lease(this.sinkId, { roller_id: this.rollerId, ttl_seconds: this.ttlSeconds, lease_id: this.id });
      this.validUntil = sentAt + this.ttlSeconds * 1000;
    } catch (error) {
      if (isApiRefusal(error, 'lease_lost') || isApiRefusal(error, 'sink_not_found')) {
        this.lose(new RollError('lease_lost', `the lease of ${this.sinkId} was taken over or the sink deleted`));
      } else if (Date.now() >= this.validUntil) {
        // Not another roller's doing: the API was out of reach (api_error, recorded on the sink
        // once it answers again); the lease may still be ours, left to take again.
        this.lose(new RollError('api_error', `the lease of ${this.sinkId} expired while the API could not renew it: ${error instanceof Error ? error.message : String(error)}`));
      } else {
        this.log.warn({ sink: this.sinkId, err: error }, 'lease renewal failed; retrying before it expires');
      }
    }
  }

  private lose(reason: RollError): void {
    this.log.warn({ sink: this.sinkId }, reason.message);
    this.controller.abort(reason);
  }

  /**
   * The failure left in `unrecorded` (a roll before this one under the same lease), told the
   * API now: the sink's run of failures as recorded, or undefined when nothing was told (none
   * left, the lease no longer ours, or the API still out of reach: then `release` tries again).
   */
  async tellUnrecorded(): Promise<RollErrorResult['roll_error'] | undefined> {
    const failure = this.unrecorded;
    if (failure === undefined) return undefined;
    try {
      const recorded = await tellFailure(this.api, this.sinkId, this.id, failure);
      this.unrecorded = undefined;
      if (recorded) this.log.warn({ reason: recorded.code, since: recorded.since, failed_rolls: recorded.attempts }, 'recorded a failed roll the API could not be told of when it failed');
      return recorded ?? undefined;
    } catch (error) {
      this.log.warn({ err: error }, 'could not record a failed roll the API could not be told of; trying again when the lease is given back');
      return undefined;
    }
  }

  /**
   * A roll under this lease ends without knowing whether its commit landed (no answer, or a
   * 5xx): the commit may still land, so the lease is not given back for the margin after this
   * (`release`), as a takeover after expiry also leaves it.
   */
  commitInDoubt(): void {
    this.inDoubtAt = Date.now();
  }

  /**
   * Stops renewing, tells the API of a failure it could not be told of, and gives the lease
   * back; after a commit in doubt, only `quietMs` after it (renewing meanwhile). With the API
   * out of reach the lease is left to `left` (the service's), to take again or give back once
   * it answers; else it expires on its own.
   */
  async release(quietMs = 0): Promise<void> {
    if (this.released) return;
    const wait = this.inDoubtAt === undefined ? 0 : this.inDoubtAt + quietMs - Date.now();
    if (wait > 0 && !this.controller.signal.aborted) {
      this.log.info({ sink: this.sinkId, wait_ms: Math.round(wait) }, 'a commit of the roll may still land: the lease is held that long before it is given back');
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
    this.released = true;
    clearInterval(this.timer);
    try {
      if (this.unrecorded !== undefined) {
        await tellFailure(this.api, this.sinkId, this.id, this.unrecorded);
        this.unrecorded = undefined;
      }
      await this.api.releaseLease(this.sinkId, this.id);
    } catch (error) {
      if (unreachable(error) && this.left !== undefined) {
        this.left.add(this.sinkId, this.id, this.unrecorded);
        this.log.warn({ sink: this.sinkId, err: error, unrecorded_failure: this.unrecorded?.code ?? null }, 'could not give the lease back, the API is out of reach; it is taken again or given back once the API answers');
      } else {
        this.log.warn({ sink: this.sinkId, err: error }, 'lease release failed; it expires on its own');
      }
    }
  }
}
