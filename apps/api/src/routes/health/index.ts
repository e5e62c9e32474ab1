import type { FastifyInstance } from 'fastify';
import type { RouteDeps } from '../../deps.ts';
import { healthz } from './healthz.ts';
import { readyz } from './readyz.ts';

/** Public probes: no API key. */
export function healthRoutes(app: FastifyInstance, deps: RouteDeps): void {
  healthz(app);
  readyz(app, deps);
}
