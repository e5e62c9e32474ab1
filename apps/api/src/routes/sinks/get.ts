import { SinkParams, Sink } from '@tablemere/contracts';
import type { FastifyInstance } from 'fastify';
import { findSink } from '../../domain/sinks/list.ts';
import { describeSinks } from '../../domain/sinks/view.ts';
import { principalOf } from '../../http/auth.ts';
import { parse } from '../../http/parse.ts';
import type { SinkRouteDeps } from './context.ts';

/** GET /v1/sinks/{id|name}: state, roll policy, lag, received, last roll, rejects. */
export function getSink(app: FastifyInstance, deps: SinkRouteDeps): void {
  app.get('/v1/sinks/:sink', {
    config: {
      openapi: {
        id: 'getSink', tag: 'sinks', summary: 'A sink: state, roll policy, lag, last roll, rejects, upkeep',
        params: SinkParams,
        paramDescriptions: { sink: "The sink's id (`snk_` and 12 hex; finds deleted sinks too) or name" },
        answers: { 200: { description: 'The sink', schema: Sink } },
        errors: ['sink_not_found'],
      },
    },
  }, async (request): Promise<Sink> => {
    const params = parse(SinkParams, request.params, 'params');
    const row = await findSink(deps.pool, principalOf(request).projectId, params.sink);
    const [sink] = await describeSinks(deps.pool, deps, [row]);
    return sink!;
  });
}
