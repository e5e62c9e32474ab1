import { SinkListQuery, SinkList } from '@tablemere/contracts';
import type { FastifyInstance } from 'fastify';
import { listSinks as listSinkRows } from '../../domain/sinks/list.ts';
import { openWarehouse } from '../../domain/warehouses.ts';
import { principalOf } from '../../http/auth.ts';
import { parse } from '../../http/parse.ts';
import type { SinkRouteDeps } from './context.ts';

/** GET /v1/sinks[?warehouse=NAME][&include_deleted=true] */
export function listSinks(app: FastifyInstance, deps: SinkRouteDeps): void {
  app.get('/v1/sinks', {
    config: {
      openapi: {
        id: 'listSinks', tag: 'sinks', summary: "The project's sinks",
        description: 'Oldest first.',
        query: SinkListQuery,
        paramDescriptions: { warehouse: "Only this warehouse's sinks", include_deleted: 'Deleted sinks too', stalled: 'Only sinks whose rolls are failing (`roll_error` set)' },
        answers: { 200: { description: 'Sinks', schema: SinkList } },
        errors: ['warehouse_not_found'],
      },
    },
  }, async (request): Promise<SinkList> => {
    const filter = parse(SinkListQuery, request.query, 'query');
    const { projectId } = principalOf(request);
    // An unknown warehouse is 404, not an empty list: a typo should not look like "no sinks".
    if (filter.warehouse !== undefined) await openWarehouse(deps.pool, deps.secrets, projectId, filter.warehouse);
    return { sinks: await listSinkRows(deps.pool, deps, projectId, filter) };
  });
}
