import { SEND_BODY_LIMIT } from '@tablemere/contracts';
import { apiError } from '../../errors.ts';

const MIB = 1024 * 1024;

export interface InFlightLimits {
  /** Body bytes of the sends this process reads or stores at once (TABLEMERE_SEND_MAX_BYTES_IN_FLIGHT). */
  processBytes: number;
  /** Of those, for one sink (TABLEMERE_SEND_MAX_BYTES_IN_FLIGHT_PER_SINK). */
  sinkBytes: number;
}

/** 32 full 16 MiB bodies in all, 8 for one sink. */
export const DEFAULT_IN_FLIGHT_LIMITS: Readonly<InFlightLimits> = Object.freeze({ processBytes: 512 * MIB, sinkBytes: 128 * MIB });

/**
 * What a send counts for: its declared Content-Length (the most it may hold), the whole limit
 * when it declares none, and at least 64 KiB, so that a crowd of tiny or empty bodies is
 * bounded too (8,192 in the process by default).
 */
export function inFlightWeight(contentLength: string | undefined): number {
  const declared = contentLength === undefined ? Number.NaN : Number(contentLength);
  const bytes = Number.isSafeInteger(declared) && declared >= 0 ? Math.min(declared, SEND_BODY_LIMIT) : SEND_BODY_LIMIT;
  return Math.max(bytes, 64 * 1024);
}

/** A busy intake frees up within a request's time: a second is enough to wait. */
export const BUSY_RETRY_AFTER_SECONDS = 1;

/**
 * The sends in flight (body being read, stored or recorded), weighed by the bytes each may
 * hold, per sink and in all, so that slow or many clients cannot make the process buffer
 * bodies without bound. Past a cap the route answers 503 intake_busy before reading a byte.
 * A send is always let in when nothing else is in flight there, so a cap below one body's
 * size slows a sink down but never stops it.
 */
export class InFlight {
  private total = 0;
  private readonly bySink = new Map<string, number>();

  constructor(readonly limits: InFlightLimits) {}

  /**
   * Takes `weight` bytes for a send to `sinkId`, or throws 503 intake_busy; call the returned
   * function once when the send is done. `own`: bytes the same send holds already (a
   * compressed body growing as it decodes), which do not count as something else in flight.
   */
  enter(sinkId: string, weight: number, own = 0): () => void {
    const sink = this.bySink.get(sinkId) ?? 0;
    const over = (used: number, cap: number) => used > own && used + weight > cap;
    const scope = over(this.total, this.limits.processBytes) ? 'process' : over(sink, this.limits.sinkBytes) ? 'sink' : undefined;
    if (scope) {
      throw apiError('intake_busy', {
        headers: { 'retry-after': String(BUSY_RETRY_AFTER_SECONDS) },
        details: { retry_after: BUSY_RETRY_AFTER_SECONDS, limit: scope, max_bytes_in_flight: scope === 'process' ? this.limits.processBytes : this.limits.sinkBytes },
      });
    }
    this.total += weight;
    this.bySink.set(sinkId, sink + weight);
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.total -= weight;
      const remaining = (this.bySink.get(sinkId) ?? weight) - weight;
      if (remaining <= 0) this.bySink.delete(sinkId);
      else this.bySink.set(sinkId, remaining);
    };
  }

  /** Bytes in flight now. */
  get bytes(): number {
    return this.total;
  }
}
