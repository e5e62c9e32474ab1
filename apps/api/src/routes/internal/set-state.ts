import { InternalSinkParams, SinkStateRequest, SinkStateResult } from '@tablemere/contracts';
import type { FastifyInstance } from 'fastify';
import type { InternalRouteDeps } from '../../deps.ts';
import { setSinkState } from '../../domain/rolls/state.ts';
import { parse } from '../../http/parse.ts';

/** PUT /internal/sinks/{id}/state: `table_missing` when the table is gone, `active` again when back. */
export function setState(app: FastifyInstance, deps: InternalRouteDeps): void {
  app.put('/internal/sinks/:id/state', {
    config: {
      openapi: {
        id: 'setSinkState', tag: 'roller', summary: 'Mark the table missing, or the sink active again',
        params: InternalSinkParams,
        body: { schema: SinkStateRequest },
        answers: { 200: { description: 'The state, and the one before', schema: SinkStateResult } },
        errors: ['sink_not_found', 'lease_lost'],
      },
    },
  }, async (request): Promise<SinkStateResult> => {
    const { id } = parse(InternalSinkParams, request.params, 'params');
    return setSinkState(deps.pool, id, parse(SinkStateRequest, request.body, 'body'));
  });
}
