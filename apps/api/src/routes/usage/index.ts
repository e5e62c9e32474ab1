import type { FastifyInstance } from 'fastify';
import type { RouteDeps } from '../../deps.ts';
import { apiKeyScope } from '../../http/auth.ts';
import { getUsage } from './get.ts';

export function usageRoutes(app: FastifyInstance, deps: RouteDeps): void {
  app.register(apiKeyScope(deps.pool, 'read', (read) => getUsage(read, deps)));
}
