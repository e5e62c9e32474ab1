import type { FastifyInstance } from 'fastify';
import type { RouteDeps } from '../../deps.ts';
import { apiKeyScope } from '../../http/auth.ts';
import { getConnection } from './get.ts';

export function connectionRoutes(app: FastifyInstance, deps: RouteDeps): void {
  app.register(apiKeyScope(deps.pool, 'read', (read) => getConnection(read, deps)));
}
