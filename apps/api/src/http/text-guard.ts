import { isStorableText, STORABLE_TEXT_MESSAGE } from '@tablemere/contracts';
import type { FastifyInstance } from 'fastify';
import { apiError } from '../errors.ts';

type Path = (string | number)[];

/**
 * Where in a parsed JSON value (or query, or path parameters) a string or key holds text
 * Postgres cannot store, or undefined. Bytes are not walked: the send route's body is bytes,
 * stored as sent.
 */
export function unstorableTextAt(value: unknown, path: Path = []): Path | undefined {
  if (typeof value === 'string') return isStorableText(value) ? undefined : path;
  if (typeof value !== 'object' || value === null) return undefined;
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = unstorableTextAt(item, [...path, index]);
      if (found) return found;
    }
    return undefined;
  }
  if (ArrayBuffer.isView(value)) return undefined;
  for (const [key, item] of Object.entries(value)) {
    if (!isStorableText(key)) return [...path, key];
    const found = unstorableTextAt(item, [...path, key]);
    if (found) return found;
  }
  return undefined;
}

/**
 * Refuses, with 400 invalid_request, any request whose path parameters, query or JSON body
 * hold a NUL or a lone surrogate, before a route sees it. The contracts refuse them field by
 * field too (so the CLI agrees); this keeps a route that forgets one from reaching Postgres
 * with it, where it would fail (22P02, 22021) or turn into U+FFFD unseen.
 */
export function refuseUnstorableText(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    for (const [part, value] of [['params', request.params], ['query', request.query], ['body', request.body]] as const) {
      const path = unstorableTextAt(value, [part]);
      if (path) {
        const message = `${path.join('.')}: ${STORABLE_TEXT_MESSAGE}`;
        throw apiError('invalid_request', { message, details: { issues: [{ path, code: 'invalid_text', message: STORABLE_TEXT_MESSAGE }] } });
      }
    }
  });
}
