import { InternalSinkParams, RollErrorRequest, RollErrorResult } from '@tablemere/contracts';
import type { FastifyInstance } from 'fastify';
import type { InternalRouteDeps } from '../../deps.ts';
import { setRollError } from '../../domain/rolls/state.ts';
import { parse } from '../../http/parse.ts';

/** PUT /internal/sinks/{id}/roll-error: why the last roll failed, or null after a good one. */
export function setRollErrorRoute(app: FastifyInstance, deps: InternalRouteDeps): void {
  app.put('/internal/sinks/:id/roll-error', {
    config: {
      openapi: {
        id: 'setRollError', tag: 'roller', summary: 'Why the last roll failed, or null after a good one',
        params: InternalSinkParams,
        body: { schema: RollErrorRequest },
        answers: { 200: { description: "The sink's run of failures", schema: RollErrorResult } },
        errors: ['sink_not_found', 'lease_lost'],
      },
    },
  }, async (request): Promise<RollErrorResult> => {
    const { id } = parse(InternalSinkParams, request.params, 'params');
    return setRollError(deps.pool, id, parse(RollErrorRequest, request.body, 'body'));
  });
}
