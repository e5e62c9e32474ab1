import { CreateKeyRequest, CreatedKey } from '@tablemere/contracts';
import { transaction } from '@tablemere/db';
import type { FastifyInstance } from 'fastify';
import type { RouteDeps } from '../../deps.ts';
import { createApiKey } from '../../domain/api-keys.ts';
import { principalOf } from '../../http/auth.ts';
import { parse } from '../../http/parse.ts';

/** POST /v1/keys: a new API key, shown once. */
export function createKey(app: FastifyInstance, deps: RouteDeps): void {
  app.post('/v1/keys', {
    config: {
      openapi: {
        id: 'createKey', tag: 'keys', summary: 'Create an API key',
        description: 'The key is in this answer only (`Cache-Control: no-store`); it is stored as its SHA-256.',
        body: { schema: CreateKeyRequest },
        answers: {
          201: {
            description: 'The key, shown this once',
            schema: CreatedKey,
            headers: { 'Cache-Control': { description: '`no-store`: no cache keeps the key.', schema: { type: 'string', const: 'no-store' } } },
          },
        },
        errors: [],
      },
    },
  }, async (request, reply): Promise<CreatedKey> => {
    const body = parse(CreateKeyRequest, request.body, 'body');
    const principal = principalOf(request);
    const created = await transaction(deps.pool, (client) => createApiKey(client, principal.projectId, body, principal.keyId));
    void reply.status(201).header('cache-control', 'no-store');
    return created;
  });
}
