import { apiError } from '../errors.ts';

export interface InFlightLimits {
  /** Send requests this process reads or stores at once (TABLEMERE_SEND_MAX_IN_FLIGHT). */
  perProcess: number;
  /** Of those, for one sink (TABLEMERE_SEND_MAX_IN_FLIGHT_PER_SINK). */
  perSink: number;
}

export const DEFAULT_IN_FLIGHT_LIMITS: Readonly<InFlightLimits> = Object.freeze({ perProcess: 64, perSink: 16 });

/** A busy intake frees up within a request's time: a second is enough to wait. */
export const BUSY_RETRY_AFTER_SECONDS = 1;

/**
 * The send requests in flight (body being read, stored or recorded), per sink and in all,
 * so that slow or many clients cannot make the process buffer bodies without bound: each
 * may hold up to 16 MiB. Past a cap the route answers 503 intake_busy before reading a byte.
 */
export class InFlight {
  private total = 0;
  private readonly bySink = new Map<string, number>();

  constructor(readonly limits: InFlightLimits) {}

  /** Takes a place for a request to `sinkId`, or throws 503 intake_busy; call the returned function once when it is done. */
  enter(sinkId: string): () => void {
    const sink = this.bySink.get(sinkId) ?? 0;
    if (this.total >= this.limits.perProcess || sink >= this.limits.perSink) {
      const scope = this.total >= this.limits.perProcess ? 'process' : 'sink';
      throw apiError('intake_busy', {
        headers: { 'retry-after': String(BUSY_RETRY_AFTER_SECONDS) },
        details: { retry_after: BUSY_RETRY_AFTER_SECONDS, limit: scope, max_in_flight: scope === 'process' ? this.limits.perProcess : this.limits.perSink },
      });
    }
    this.total += 1;
    this.bySink.set(sinkId, sink + 1);
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.total -= 1;
      const remaining = (this.bySink.get(sinkId) ?? 1) - 1;
      if (remaining === 0) this.bySink.delete(sinkId);
      else this.bySink.set(sinkId, remaining);
    };
  }

  /** Requests in flight now. */
  get size(): number {
    return this.total;
  }
}
