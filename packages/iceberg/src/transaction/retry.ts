/** How often and how patiently a commit is retried after a lost race or an unknown outcome. */
export interface RetryPolicy {
  /** Total commit attempts, the first included. */
  attempts: number;
  minBackoffMs: number;
  maxBackoffMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = Object.freeze({ attempts: 5, minBackoffMs: 500, maxBackoffMs: 8_000 });

/**
 * Delay before retry number `retry` (1 = first retry): a floor doubling from the minimum, jittered
 * up to twice the floor so concurrent writers spread out, capped at the maximum. With the default
 * policy the four retries wait 0.5–1, 1–2, 2–4 and 4–8 s: the description's 0.5–8 s.
 */
export function backoffMs(policy: RetryPolicy, retry: number, random: () => number = Math.random): number {
  const floor = Math.min(policy.maxBackoffMs, policy.minBackoffMs * 2 ** (retry - 1));
  return Math.round(Math.min(policy.maxBackoffMs, floor + random() * floor));
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
