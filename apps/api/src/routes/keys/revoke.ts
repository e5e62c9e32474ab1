import { KeyId, RevokedKey } from '@tablemere/contracts';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { RouteDeps } from '../../deps.ts';
import { revokeApiKey } from '../../domain/api-keys.ts';
import { principalOf } from '../../http/auth.ts';
import { parse } from '../../http/parse.ts';

const Params = z.strictObject({ id: KeyId });

/** DELETE /v1/keys/{id}: revokes a key of the project; it stops working at once. */
export function revokeKey(app: FastifyInstance, deps: RouteDeps): void {
  app.delete('/v1/keys/:id', {
    config: {
      openapi: {
        id: 'revokeKey', tag: 'keys', summary: 'Revoke an API key',
        description: "It stops working at once. The project's last admin key cannot be revoked.",
        params: Params,
        paramDescriptions: { id: "The key's id (the 12 hex digits after tm_key_)" },
        answers: { 200: { description: 'The revoked key', schema: RevokedKey } },
        errors: ['key_not_found', 'last_admin_key'],
      },
    },
  }, async (request): Promise<RevokedKey> => {
    const { id } = parse(Params, request.params, 'params');
    return revokeApiKey(deps.pool, principalOf(request), id);
  });
}
