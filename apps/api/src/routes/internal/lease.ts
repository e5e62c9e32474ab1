import { InternalSinkParams, LeaseRequest, Lease } from '@tablemere/contracts';
import type { FastifyInstance } from 'fastify';
import type { InternalRouteDeps } from '../../deps.ts';
import { acquireLease } from '../../domain/rolls/leases.ts';
import { parse } from '../../http/parse.ts';

/** POST /internal/sinks/{id}/lease: take the sink's lease, or renew it with its lease_id. */
export function takeLease(app: FastifyInstance, deps: InternalRouteDeps): void {
  app.post('/internal/sinks/:id/lease', {
    config: {
      openapi: {
        id: 'takeLease', tag: 'roller', summary: "Take the sink's lease, or renew it with its lease_id",
        params: InternalSinkParams,
        body: { schema: LeaseRequest },
        answers: { 200: { description: 'The lease', schema: Lease } },
        errors: ['sink_not_found', 'lease_held', 'lease_lost'],
      },
    },
  }, async (request): Promise<Lease> => {
    const { id } = parse(InternalSinkParams, request.params, 'params');
    return acquireLease(deps.pool, id, parse(LeaseRequest, request.body, 'body'));
  });
}
