import type { Health } from '@tablemere/contracts';
import type { FastifyInstance } from 'fastify';

/** GET /healthz: the process is up (no dependency is checked). */
export function healthz(app: FastifyInstance): void {
  app.get('/healthz', async (): Promise<Health> => ({ status: 'ok' }));
}
