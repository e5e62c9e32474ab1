import type { ApiKeyLevel } from '@tablemere/contracts';
import type { Pool } from '@tablemere/db';
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from 'fastify';
import { authenticate } from '../domain/api-keys.ts';
import { levelAtLeast, type Principal } from '../domain/principal.ts';
import { apiError } from '../errors.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the API key hook of the route's scope; null on public routes. */
    principal: Principal | null;
  }
}

/** The token of an `Authorization: Bearer <token>` header. */
export function bearerToken(header: string | undefined): string | undefined {
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header ?? '');
  return match?.[1];
}

/**
 * A scope whose routes all need an API key of at least `level`: 401 without a key or with an
 * unknown one, 403 when the key's level is lower. Runs before the body is read, so an
 * unauthenticated caller learns nothing about the route's schema.
 */
export function apiKeyScope(pool: Pool, level: ApiKeyLevel, routes: (scope: FastifyInstance) => void): FastifyPluginAsync {
  return async (scope) => {
    scope.addHook('onRequest', async (request) => {
      const token = bearerToken(request.headers.authorization);
      if (token === undefined) throw apiError('unauthorized');
      const principal = await authenticate(pool, token);
      if (!principal) {
        throw apiError('unauthorized', { message: 'This API key is unknown or revoked; check the key, or ask an admin for a new one.' });
      }
      if (!levelAtLeast(principal.level, level)) {
        throw apiError('forbidden', { details: { required_level: level, key_level: principal.level } });
      }
      request.principal = principal;
    });
    routes(scope);
  };
}

/** The caller of a route registered inside an API key scope. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new Error(`route ${request.routeOptions.url} is not inside an API key scope`);
  return request.principal;
}
