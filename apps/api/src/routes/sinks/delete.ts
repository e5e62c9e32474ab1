import { SinkParams, DeletedSink } from '@tablemere/contracts';
import type { FastifyInstance } from 'fastify';
import { deleteSink as deleteSinkRow } from '../../domain/sinks/delete.ts';
import { principalOf } from '../../http/auth.ts';
import { parse } from '../../http/parse.ts';
import type { SinkRouteDeps } from './context.ts';

/** DELETE /v1/sinks/{id|name}: 202; the key stops at once, pending batches are discarded, the table is untouched. */
export function deleteSink(app: FastifyInstance, deps: SinkRouteDeps): void {
  app.delete('/v1/sinks/:sink', {
    config: {
      openapi: {
        id: 'deleteSink', tag: 'sinks', summary: 'Delete a sink',
        description: 'Its send key stops working at once, its pending batches are discarded and removed from intake; rejects files and the table stay.',
        params: SinkParams,
        paramDescriptions: { sink: "The sink's id or name" },
        answers: { 202: { description: 'Deleted', schema: DeletedSink } },
        errors: ['sink_not_found'],
      },
    },
  }, async (request, reply): Promise<DeletedSink> => {
    const params = parse(SinkParams, request.params, 'params');
    const deleted = await deleteSinkRow({ pool: deps.pool, intakes: deps.intakes, log: request.log }, principalOf(request), params.sink);
    deps.sendKeys.forget(deleted.id);
    void reply.status(202);
    return deleted;
  });
}
