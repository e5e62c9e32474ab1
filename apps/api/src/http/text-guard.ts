import { isStorableText, STORABLE_TEXT_MESSAGE } from '@tablemere/contracts';
import type { FastifyInstance } from 'fastify';
import { apiError } from '../errors.ts';

type Path = (string | number)[];

/** A value still to look at, with the way back to the root: the path is spelled out only when found. */
interface Pending {
  value: unknown;
  key: string | number;
  parent: Pending | undefined;
}

function pathOf(at: Pending | undefined, root: Path): Path {
  const steps: Path = [];
  for (let step = at; step; step = step.parent) steps.push(step.key);
  return [...root, ...steps.reverse()];
}

/**
 * Where in a parsed JSON value (or query, or path parameters) a string or key holds text
 * Postgres cannot store, or undefined. Bytes are not walked: the send route's body is bytes,
 * stored as sent. A loop over an explicit stack, no recursion and no path copied per level:
 * however deep a value is, the walk costs its size.
 */
export function unstorableTextAt(value: unknown, root: Path = []): Path | undefined {
  const stack: Array<Pending | undefined> = [];
  let item: unknown = value;
  let at: Pending | undefined;
  for (;;) {
    if (typeof item === 'string') {
      if (!isStorableText(item)) return pathOf(at, root);
    } else if (typeof item === 'object' && item !== null && !ArrayBuffer.isView(item)) {
      const entries = Array.isArray(item) ? item.entries() : Object.entries(item);
      const children: Pending[] = [];
      for (const [key, child] of entries) {
        if (typeof key === 'string' && !isStorableText(key)) return pathOf({ value: child, key, parent: at }, root);
        children.push({ value: child, key, parent: at });
      }
      // Reversed, so the first member is looked at first and the first bad one is the one named.
      for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]);
    }
    if (stack.length === 0) return undefined;
    at = stack.pop()!;
    item = at.value;
  }
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
