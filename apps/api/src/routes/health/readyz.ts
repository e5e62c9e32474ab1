import { Readiness } from '@tablemere/contracts';
import type { FastifyInstance } from 'fastify';
import type { RouteDeps } from '../../deps.ts';
import { readinessChecker } from '../../domain/readiness.ts';

/** GET /readyz: 200 when Postgres and the intake store answer in time, else 503; each warehouse's catalog reported beside. */
export function readyz(app: FastifyInstance, deps: RouteDeps): void {
  const check = readinessChecker({ pool: deps.pool, s3: deps.s3, intakeBucket: deps.intakeBucket, secrets: deps.secrets, timeoutMs: deps.readinessTimeoutMs });
  app.get('/readyz', {
    config: {
      openapi: {
        id: 'readyz', tag: 'probes', summary: 'Postgres and the intake store answer; each catalog reported',
        description: 'A readiness probe for a load balancer: ready when this process can serve (Postgres and the intake store answer within a deadline). Each registered warehouse\'s catalog is checked too (at most every 15 s) and reported by warehouse id, without failing readiness. A failed check says only why, in a closed set of reasons.',
        answers: {
          200: { description: 'Postgres and the store answered; `warehouses` says how each catalog did', schema: Readiness },
          503: { description: 'Postgres or the store failed: `status: unavailable`', schema: Readiness },
        },
        errors: [],
      },
    },
  }, async (request, reply): Promise<Readiness> => {
    const readiness = await check(request.log);
    void reply.status(readiness.status === 'ok' ? 200 : 503);
    return readiness;
  });
}
