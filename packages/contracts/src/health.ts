import { z } from 'zod';

export const Health = z.object({ status: z.literal('ok') });
export type Health = z.infer<typeof Health>;

/**
 * One dependency check. `reason` is a closed set so the unauthenticated route never echoes
 * a host name or an upstream message; details go to the log.
 */
export const ReadinessCheck = z.object({
  status: z.enum(['ok', 'failed']),
  duration_ms: z.number().int().nonnegative(),
  reason: z.enum(['timeout', 'unreachable', 'error']).optional(),
});
export type ReadinessCheck = z.infer<typeof ReadinessCheck>;

/** One registered warehouse's catalog, by the warehouse's id (the route is unauthenticated: no names). */
export const WarehouseHealth = ReadinessCheck.extend({ id: z.string() });
export type WarehouseHealth = z.infer<typeof WarehouseHealth>;

/**
 * Ready when the process can serve: Postgres and the intake store answer. Each warehouse's
 * catalog is reported beside, never failing readiness: one catalog out of reach must not take out
 * of a load balancer the process that serves every other warehouse's sinks.
 */
export const Readiness = z.object({
  status: z.enum(['ok', 'unavailable']),
  checks: z.object({ postgres: ReadinessCheck, store: ReadinessCheck }),
  warehouses: z.array(WarehouseHealth),
});
export type Readiness = z.infer<typeof Readiness>;
