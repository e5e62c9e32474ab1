import { CreateSinkRequest, type CreatedSink } from '@tablemere/contracts';
import type { FastifyInstance } from 'fastify';
import { createSink as createSinkRow } from '../../domain/sinks.ts';
import { principalOf } from '../../http/auth.ts';
import { parse } from '../../http/parse.ts';
import type { SinkRouteDeps } from './context.ts';

/** POST /v1/sinks: a sink for an existing unpartitioned table; 201 with the send key, shown this once. */
export function createSink(app: FastifyInstance, deps: SinkRouteDeps): void {
  app.post('/v1/sinks', async (request, reply): Promise<CreatedSink> => {
    const body = parse(CreateSinkRequest, request.body, 'body');
    const created = await createSinkRow(deps, principalOf(request), body);
    void reply.status(201);
    return created;
  });
}
