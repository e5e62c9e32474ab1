import type { Logger } from 'pino';
import { RollError } from './errors.ts';
import { type InternalApi, isApiRefusal } from './internal-api.ts';

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

  private constructor(
    private readonly api: InternalApi,
    readonly sinkId: string,
    readonly id: string,
    private readonly rollerId: string,
    private readonly ttlSeconds: number,
    sentAt: number,
    private readonly log: Logger,
  ) {
    this.validUntil = sentAt + ttlSeconds * 1000;
    this.timer = setInterval(() => void this.renew(), (ttlSeconds * 1000) / 3);
    this.timer.unref();
  }

  /** Takes the sink's lease; undefined when another roller holds it. */
  static async acquire(api: InternalApi, sinkId: string, rollerId: string, ttlSeconds: number, log: Logger): Promise<SinkLease | undefined> {
    const sentAt = Date.now();
    try {
      const lease = await api.lease(sinkId, { roller_id: rollerId, ttl_seconds: ttlSeconds });
      return new SinkLease(api, sinkId, lease.lease_id, rollerId, ttlSeconds, sentAt, log);
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
        this.lose(`the lease of ${this.sinkId} was taken over or the sink deleted`);
      } else if (Date.now() >= this.validUntil) {
        this.lose(`the lease of ${this.sinkId} expired while the API could not renew it`);
      } else {
        this.log.warn({ sink: this.sinkId, err: error }, 'lease renewal failed; retrying before it expires');
      }
    }
  }

  private lose(message: string): void {
    this.log.warn({ sink: this.sinkId }, message);
    this.controller.abort(new RollError('lease_lost', message));
  }

  /** Stops renewing and gives the lease back (best effort: it expires anyway). */
  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    clearInterval(this.timer);
    try {
      await this.api.releaseLease(this.sinkId, this.id);
    } catch (error) {
      this.log.warn({ sink: this.sinkId, err: error }, 'lease release failed; it expires on its own');
    }
  }
}
