import { carriesBearer } from '@tablemere/contracts';
import type { FastifyInstance } from 'fastify';
import { markAuth } from '../../openapi/route-doc.ts';
import { apiError } from '../../errors.ts';

/**
 * Every request in `scope` must carry `Authorization: Bearer <bootstrap secret>`, compared in
 * constant time; 401 otherwise.
 */
export function requireBootstrapSecret(scope: FastifyInstance, secret: string): void {
  markAuth(scope, 'bootstrap_secret');
  scope.addHook('onRequest', async (request) => {
    if (!carriesBearer(request.headers.authorization, secret)) {
      throw apiError('unauthorized', { message: 'Internal routes need "Authorization: Bearer <TABLEMERE_BOOTSTRAP_SECRET>".' });
    }
  });
}
