import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { markAuth } from '../../openapi/route-doc.ts';
import { apiError } from '../../errors.ts';
import { bearerToken } from '../../http/auth.ts';

const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();

/**
 * Every request in `scope` must carry `Authorization: Bearer <bootstrap secret>`; 401
 * otherwise. Both sides are hashed first, so the comparison takes the same time whatever
 * the length or content of what was sent.
 */
export function requireBootstrapSecret(scope: FastifyInstance, secret: string): void {
  const expected = digest(secret);
  markAuth(scope, 'bootstrap_secret');
  scope.addHook('onRequest', async (request) => {
    const token = bearerToken(request.headers.authorization);
    if (token === undefined || !timingSafeEqual(digest(token), expected)) {
      throw apiError('unauthorized', { message: 'Internal routes need "Authorization: Bearer <TABLEMERE_BOOTSTRAP_SECRET>".' });
    }
  });
}
