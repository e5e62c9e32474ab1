import { bearerToken, sinkIdOfSendKey, type ApiKeyLevel } from '@tablemere/contracts';
import type { Pool } from '@tablemere/db';
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from 'fastify';
import { authenticate } from '../domain/api-keys.ts';
import type { SendingSink } from '../domain/intake/accept.ts';
import { throughDatabase } from '../domain/intake/unavailable.ts';
import { levelAtLeast, type Principal } from '../domain/principal.ts';
import { isSendKey, sendKeyRefused, type SendKeyCache } from '../domain/sinks/send-keys.ts';
import { apiError } from '../errors.ts';
import { markAuth } from '../openapi/route-doc.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the API key hook of the route's scope; null on public routes. */
    principal: Principal | null;
    /** Set by the send key hook on the send route; null everywhere else. */
    sender: SendingSink | null;
  }
}

/**
 * A scope whose routes all need an API key of at least `level`: 401 without a key or with an
 * unknown one, 403 when the key's level is lower. Runs before the body is read, so an
 * unauthenticated caller learns nothing about the route's schema.
 */
export function apiKeyScope(pool: Pool, level: ApiKeyLevel, routes: (scope: FastifyInstance) => void): FastifyPluginAsync {
  return async (scope) => {
    markAuth(scope, level);
    scope.addHook('onRequest', async (request) => {
      const token = bearerToken(request.headers.authorization);
      if (token === undefined) throw apiError('unauthorized');
      // A send key is recognised by its shape alone: no lookup, and the answer is the same
      // for a live key, a dead one and a made-up one.
      if (isSendKey(token)) throw sendOnly('A send key (tm_send_...) works only on POST /v1/sinks/{sink_id}; use an API key here.');
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

function sendOnly(message: string) {
  return apiError('send_only', { message });
}

/**
 * The send route's scope: only a sink's own send key opens it (and its old one while a
 * rotation's overlap lasts). Any other bearer token (an API key, anything) is 403 send_only;
 * no token is 401. A send key for another sink, for a deleted sink, with a wrong secret or
 * past its overlap is 401 unauthorized, without saying which: the key names its sink, so
 * telling "another sink's key" apart would confirm that sink exists.
 * `sinkIdOf` reads the sink id from the route.
 */
export function sendKeyScope(keys: SendKeyCache, sinkIdOf: (request: FastifyRequest) => string, routes: (scope: FastifyInstance) => void): FastifyPluginAsync {
  return async (scope) => {
    markAuth(scope, 'send_key');
    scope.decorateRequest('sender', null);
    scope.addHook('onRequest', async (request) => {
      const token = bearerToken(request.headers.authorization);
      if (token === undefined) {
        throw apiError('unauthorized', { message: 'Send the sink\'s send key as "Authorization: Bearer tm_send_...".' });
      }
      if (!isSendKey(token)) throw sendOnly('This route takes only the sink\'s send key (tm_send_...); API keys and other tokens are refused here.');
      const sinkId = sinkIdOf(request);
      if (sinkIdOfSendKey(token) !== sinkId) throw sendKeyRefused();
      const record = await throughDatabase(() => keys.open(sinkId, token));
      if (!record) throw sendKeyRefused();
      request.sender = { id: sinkId, projectId: record.projectId, warehouseId: record.warehouseId, lingerMs: record.lingerMs, batchIds: record.batchIds };
    });
    routes(scope);
  };
}

/** The sink of a route registered inside a send key scope. */
export function senderOf(request: FastifyRequest): SendingSink {
  if (!request.sender) throw new Error(`route ${request.routeOptions.url} is not inside a send key scope`);
  return request.sender;
}
