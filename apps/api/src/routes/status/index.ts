import type { FastifyInstance } from 'fastify';
import { apiKeyScope } from '../../http/auth.ts';
import type { SinkRouteDeps } from '../sinks/context.ts';
import { getStatus } from './get.ts';
import { statusPage } from './page.ts';

/**
 * The operator's status page: its files are public and hold no data; the figures come from
 * GET /v1/status, which takes an admin key (the page's script sends the key the operator pastes).
 */
export function statusRoutes(app: FastifyInstance, deps: SinkRouteDeps): void {
  statusPage(app);
  app.register(apiKeyScope(deps.pool, 'admin', (admin) => getStatus(admin, deps)));
}
