/** How often and how patiently a commit is retried after a lost race or an unknown outcome. */
export interface RetryPolicy {
  /** Total commit attempts, the first included. */
  attempts: number;
  minBackoffMs: number;
  maxBackoffMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = Object.freeze({ attempts: 5, minBackoffMs: 500, maxBackoffMs: 8_000 });

/**
 * Delay before retry number `retry` (1 = first retry): exponential from the minimum, capped,
 * with full jitter above half of it so concurrent writers spread out.
 */
export function backoffMs(policy: RetryPolicy, retry: number, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.maxBackoffMs, policy.minBackoffMs * 2 ** (retry - 1));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
