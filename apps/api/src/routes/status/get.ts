import { StatusQuery, type OperatorStatus } from '@tablemere/contracts';
import type { FastifyInstance } from 'fastify';
import { operatorStatus } from '../../domain/status.ts';
import { principalOf } from '../../http/auth.ts';
import { parse } from '../../http/parse.ts';
import type { SinkRouteDeps } from '../sinks/context.ts';

/** GET /v1/status: every live sink of the project with its lag, rolls, rejects, error and upkeep. */
export function getStatus(app: FastifyInstance, deps: SinkRouteDeps): void {
  app.get('/v1/status', async (request, reply): Promise<OperatorStatus> => {
    parse(StatusQuery, request.query, 'query');
    // Tenant figures fetched with a key: no cache along the way may keep them.
    void reply.header('cache-control', 'no-store');
    return operatorStatus(deps.pool, deps, deps.sinkBacklog, principalOf(request).projectId);
  });
}
