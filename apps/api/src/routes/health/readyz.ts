import { Readiness } from '@tablemere/contracts';
import type { FastifyInstance } from 'fastify';
import type { RouteDeps } from '../../deps.ts';
import { checkReadiness } from '../../domain/readiness.ts';

/** GET /readyz: 200 when Postgres, the store and the catalog answer in time, else 503. */
export function readyz(app: FastifyInstance, deps: RouteDeps): void {
  app.get('/readyz', {
    config: {
      openapi: {
        id: 'readyz', tag: 'probes', summary: 'Postgres, the store and the catalog answer',
        description: 'A readiness probe: each dependency is checked within a deadline; a failed check says only why in a closed set of reasons.',
        answers: {
          200: { description: 'Every check passed (or was skipped)', schema: Readiness },
          503: { description: 'A check failed: `status: unavailable`', schema: Readiness },
        },
        errors: [],
      },
    },
  }, async (request, reply): Promise<Readiness> => {
    const readiness = await checkReadiness(
      { pool: deps.pool, s3: deps.s3, intakeBucket: deps.intakeBucket, secrets: deps.secrets, timeoutMs: deps.readinessTimeoutMs },
      request.log,
    );
    void reply.status(readiness.status === 'ok' ? 200 : 503);
    return readiness;
  });
}
