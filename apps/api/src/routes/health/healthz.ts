import { Health } from '@tablemere/contracts';
import type { FastifyInstance } from 'fastify';

/** GET /healthz: the process is up (no dependency is checked). */
export function healthz(app: FastifyInstance): void {
  app.get('/healthz', {
    config: {
      openapi: {
        id: 'healthz', tag: 'probes', summary: 'The process is up',
        description: 'Checks no dependency: a liveness probe.',
        answers: { 200: { description: 'The process runs', schema: Health } },
        errors: [],
      },
    },
  }, async (): Promise<Health> => ({ status: 'ok' }));
}
