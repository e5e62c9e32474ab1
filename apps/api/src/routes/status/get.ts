import { OperatorStatus, StatusQuery } from '@tablemere/contracts';
import type { FastifyInstance } from 'fastify';
import { operatorStatus } from '../../domain/status.ts';
import { principalOf } from '../../http/auth.ts';
import { parse } from '../../http/parse.ts';
import type { SinkRouteDeps } from '../sinks/context.ts';

/** GET /v1/status: every live sink of the project with its lag, rolls, rejects, error and upkeep. */
export function getStatus(app: FastifyInstance, deps: SinkRouteDeps): void {
  app.get('/v1/status', {
    config: {
      openapi: {
        id: 'getStatus', tag: 'status', summary: "The operator's view: every live sink with its lag, backlog, rolls, rejects, error and upkeep",
        description: 'What the status page (`/status`) shows, as JSON: the figures of `GET /v1/sinks` plus each sink\'s committed and failed rolls and rejected rows of the last 24 hours, and the backlog caps. Answered with `Cache-Control: no-store`.',
        query: StatusQuery,
        answers: { 200: { description: 'Every live sink of the project', schema: OperatorStatus } },
        errors: [],
      },
    },
  }, async (request, reply): Promise<OperatorStatus> => {
    parse(StatusQuery, request.query, 'query');
    // Tenant figures fetched with a key: no cache along the way may keep them.
    void reply.header('cache-control', 'no-store');
    return operatorStatus(deps.pool, deps, deps.sinkBacklog, principalOf(request).projectId);
  });
}
