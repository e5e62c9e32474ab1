import { KeyList } from '@tablemere/contracts';
import type { FastifyInstance } from 'fastify';
import type { RouteDeps } from '../../deps.ts';
import { listApiKeys } from '../../domain/api-keys.ts';
import { principalOf } from '../../http/auth.ts';

/** GET /v1/keys: the project's active keys, without the keys themselves. */
export function listKeys(app: FastifyInstance, deps: RouteDeps): void {
  app.get('/v1/keys', {
    config: {
      openapi: {
        id: 'listKeys', tag: 'keys', summary: "The project's active API keys",
        description: 'Without the keys themselves.',
        answers: { 200: { description: 'Active keys', schema: KeyList } },
        errors: [],
      },
    },
  }, async (request): Promise<KeyList> => ({ keys: await listApiKeys(deps.pool, principalOf(request).projectId) }));
}
