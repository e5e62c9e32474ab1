import { PendingQuery, SinkParams, PendingRows } from '@tablemere/contracts';
import type { FastifyInstance } from 'fastify';
import { findSink } from '../../domain/sinks/list.ts';
import { pendingRows } from '../../domain/sinks/peek.ts';
import { principalOf } from '../../http/auth.ts';
import { parse } from '../../http/parse.ts';
import type { SinkRouteDeps } from './context.ts';

/**
 * GET /v1/sinks/{id|name}/pending?limit= (read level): the newest rows waiting for the roll,
 * read from the intake without consuming them (what `tablemere sink tail` shows).
 */
export function getSinkPending(app: FastifyInstance, deps: SinkRouteDeps): void {
  app.get('/v1/sinks/:sink/pending', {
    config: {
      openapi: {
        id: 'getSinkPending', tag: 'sinks', summary: 'The newest rows waiting for the roll',
        description: 'Read from the intake without consuming them (what `tablemere sink tail` shows); `truncated` says older rows wait beyond the answer.',
        params: SinkParams,
        query: PendingQuery,
        paramDescriptions: { sink: "The sink's id or name", limit: 'How many of the newest rows' },
        answers: { 200: { description: 'Rows waiting', schema: PendingRows } },
        errors: ['sink_not_found', 'intake_unavailable'],
      },
    },
  }, async (request, reply) => {
    const params = parse(SinkParams, request.params, 'params');
    const q = parse(PendingQuery, request.query, 'query');
    const sink = await findSink(deps.pool, principalOf(request).projectId, params.sink);
    const rows = await pendingRows({ intake: await deps.intakes.of(sink.warehouse_id), log: request.log, db: deps.pool }, sink.id, q);
    return reply.type('application/json; charset=utf-8').send(rows);
  });
}
