import type { Readiness } from '@tablemere/contracts';
import type { FastifyInstance } from 'fastify';
import type { RouteDeps } from '../../deps.ts';
import { checkReadiness } from '../../domain/readiness.ts';

/** GET /readyz: 200 when Postgres, the store and the catalog answer in time, else 503. */
export function readyz(app: FastifyInstance, deps: RouteDeps): void {
  app.get('/readyz', async (request, reply): Promise<Readiness> => {
    const readiness = await checkReadiness(
      { pool: deps.pool, s3: deps.s3, intakeBucket: deps.intakeBucket, secrets: deps.secrets, timeoutMs: deps.readinessTimeoutMs },
      request.log,
    );
    void reply.status(readiness.status === 'ok' ? 200 : 503);
    return readiness;
  });
}
