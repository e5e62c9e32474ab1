import { LeaseParams, LeaseRelease } from '@tablemere/contracts';
import type { FastifyInstance } from 'fastify';
import type { InternalRouteDeps } from '../../deps.ts';
import { releaseLease as release } from '../../domain/rolls/leases.ts';
import { parse } from '../../http/parse.ts';

/** DELETE /internal/sinks/{id}/lease/{lease_id}: `released: false` when it was no longer this lease. */
export function releaseLease(app: FastifyInstance, deps: InternalRouteDeps): void {
  app.delete('/internal/sinks/:id/lease/:lease_id', {
    config: {
      openapi: {
        id: 'releaseLease', tag: 'roller', summary: 'Release a lease',
        description: '`released: false` when it was no longer this lease.',
        params: LeaseParams,
        answers: { 200: { description: 'Released or not', schema: LeaseRelease } },
        errors: [],
      },
    },
  }, async (request): Promise<LeaseRelease> => {
    const { id, lease_id } = parse(LeaseParams, request.params, 'params');
    return { released: await release(deps.pool, id, lease_id) };
  });
}
