import { InternalSinkParams, SinkStateRequest, type SinkStateResult } from '@tablemere/contracts';
import type { FastifyInstance } from 'fastify';
import type { InternalRouteDeps } from '../../deps.ts';
import { setSinkState } from '../../domain/rolls-state.ts';
import { parse } from '../../http/parse.ts';

/** PUT /internal/sinks/{id}/state: `table_missing` when the table is gone, `active` again when back. */
export function setState(app: FastifyInstance, deps: InternalRouteDeps): void {
  app.put('/internal/sinks/:id/state', async (request): Promise<SinkStateResult> => {
    const { id } = parse(InternalSinkParams, request.params, 'params');
    return setSinkState(deps.pool, id, parse(SinkStateRequest, request.body, 'body'));
  });
}
