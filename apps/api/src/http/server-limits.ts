import type { FastifyServerOptions } from 'fastify';

/**
 * How long a client may take, so slow or stalled clients cannot hold connections and memory.
 * Node checks the headers and request deadlines every `checkIntervalMs`.
 */
export interface ServerTimeouts {
  /** All request headers must arrive within this (Node's `headersTimeout`), else 408 and close. */
  headersMs: number;
  /** The whole request, headers and body, must arrive within this (`requestTimeout`), else 408 and close. */
  requestMs: number;
  /** A connection with no byte in either direction for this long is closed (the socket timeout). */
  idleMs: number;
  /**
   * An idle keep-alive connection between requests is closed after this (`keepAliveTimeout`).
   * Longer than any Retry-After the API gives (at most 60 s): a client that waits as told comes
   * back on a connection still open, not one the server is closing at that very moment (a
   * reused socket reset under the request, ECONNRESET; research/40).
   */
  keepAliveMs: number;
}

export const DEFAULT_SERVER_TIMEOUTS: Readonly<ServerTimeouts> = Object.freeze({
  headersMs: 10_000,
  requestMs: 60_000,
  idleMs: 30_000,
  keepAliveMs: 65_000,
});

/** Node's default checks the two deadlines only every 30 s, which lets a stalled client stay twice as long. */
const CHECK_INTERVAL_MS = 1_000;

/** The Fastify (and Node http) server options that enforce `timeouts`. */
export function timeoutOptions(timeouts: ServerTimeouts): Pick<FastifyServerOptions, 'connectionTimeout' | 'keepAliveTimeout' | 'requestTimeout'> & {
  http: { headersTimeout: number; connectionsCheckingInterval: number };
} {
  return {
    connectionTimeout: timeouts.idleMs,
    keepAliveTimeout: timeouts.keepAliveMs,
    requestTimeout: timeouts.requestMs,
    http: {
      // Node refuses a headers timeout longer than the request timeout.
      headersTimeout: Math.min(timeouts.headersMs, timeouts.requestMs),
      connectionsCheckingInterval: Math.min(CHECK_INTERVAL_MS, timeouts.headersMs),
    },
  };
}
