import { z } from 'zod';

export const Health = z.object({ status: z.literal('ok') });
export type Health = z.infer<typeof Health>;

/**
 * One dependency check. `reason` is a closed set so the unauthenticated route never echoes
 * a host name or an upstream message; details go to the log.
 */
export const ReadinessCheck = z.object({
  status: z.enum(['ok', 'failed', 'skipped']),
  duration_ms: z.number().int().nonnegative(),
  reason: z.enum(['timeout', 'unreachable', 'error', 'no_warehouse']).optional(),
});
export type ReadinessCheck = z.infer<typeof ReadinessCheck>;

export const Readiness = z.object({
  status: z.enum(['ok', 'unavailable']),
  checks: z.object({ postgres: ReadinessCheck, store: ReadinessCheck, catalog: ReadinessCheck }),
});
export type Readiness = z.infer<typeof Readiness>;
