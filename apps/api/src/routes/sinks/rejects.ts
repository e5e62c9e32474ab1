import { RejectsQuery, SinkParams, RejectsPage } from '@tablemere/contracts';
import type { FastifyInstance } from 'fastify';
import { findSink } from '../../domain/sinks/list.ts';
import { rejectsPage } from '../../domain/sinks/peek.ts';
import { principalOf } from '../../http/auth.ts';
import { parse } from '../../http/parse.ts';
import type { SinkRouteDeps } from './context.ts';

/**
 * GET /v1/sinks/{id|name}/rejects?since=&limit=&cursor= (read level): a page of the rows the
 * sink's rolls rejected, read from its rejects files; next_cursor continues.
 */
export function getSinkRejects(app: FastifyInstance, deps: SinkRouteDeps): void {
  app.get('/v1/sinks/:sink/rejects', {
    config: {
      openapi: {
        id: 'getSinkRejects', tag: 'sinks', summary: "A page of the rows the sink's rolls rejected",
        description: 'Read from its rejects files, kept for the rejects retention of the roller (its setting `TABLEMERE_ROLLER_REJECTS_RETENTION_SECONDS`, or that setting\'s default in the roller), in batch id and line order; `next_cursor` continues (null on the last page).',
        params: SinkParams,
        query: RejectsQuery,
        paramDescriptions: { sink: "The sink's id or name", since: 'Files written at or after this time', limit: 'Rows per page', cursor: 'The `next_cursor` of the page before' },
        answers: { 200: { description: 'A page of rejected rows', schema: RejectsPage } },
        errors: ['sink_not_found', 'intake_unavailable'],
      },
    },
  }, async (request, reply) => {
    const params = parse(SinkParams, request.params, 'params');
    const q = parse(RejectsQuery, request.query, 'query');
    const sink = await findSink(deps.pool, principalOf(request).projectId, params.sink);
    const page = await rejectsPage({ intake: await deps.intakes.of(sink.warehouse_id), log: request.log }, sink.id, q);
    return reply.type('application/json; charset=utf-8').send(page);
  });
}
