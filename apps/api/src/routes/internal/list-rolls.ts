import { InternalSinkParams, RollsQuery, RollList } from '@tablemere/contracts';
import type { FastifyInstance } from 'fastify';
import type { InternalRouteDeps } from '../../deps.ts';
import { listRolls as list } from '../../domain/rolls/intents.ts';
import { parse } from '../../http/parse.ts';

/** GET /internal/sinks/{id}/rolls[?state=open][&limit=N]: the sink's rolls, newest first. */
export function listRolls(app: FastifyInstance, deps: InternalRouteDeps): void {
  app.get('/internal/sinks/:id/rolls', {
    config: {
      openapi: {
        id: 'listRolls', tag: 'roller', summary: "The sink's roll intents, newest first",
        params: InternalSinkParams,
        query: RollsQuery,
        answers: { 200: { description: 'Roll intents', schema: RollList } },
        errors: ['sink_not_found'],
      },
    },
  }, async (request): Promise<RollList> => {
    const { id } = parse(InternalSinkParams, request.params, 'params');
    return { rolls: await list(deps.pool, id, parse(RollsQuery, request.query, 'query')) };
  });
}
