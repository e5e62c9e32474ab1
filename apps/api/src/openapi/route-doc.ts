import type { ApiKeyLevel } from '@tablemere/contracts';
import type { FastifyInstance } from 'fastify';
import type { z } from 'zod';
import type { ErrorCode } from '../errors.ts';

/** Who may call a route: no one in particular, an API key of a level, the sink's send key, or the roller's secret. */
export type RouteAuth = 'none' | ApiKeyLevel | 'send_key' | 'bootstrap_secret';

export interface HeaderDoc {
  description: string;
  required?: boolean;
  schema: Record<string, unknown>;
  example?: string;
}

/** One success answer of a route. */
export interface AnswerDoc {
  description: string;
  /** The body's contract; absent with `text` or no body. */
  schema?: z.ZodType;
  /** A body that is not JSON (`/metrics`, `/docs`): its media type. */
  text?: string;
  headers?: Record<string, HeaderDoc>;
  /** Named examples of the body. */
  examples?: Record<string, { summary: string; value: unknown }>;
}

/**
 * What the OpenAPI document says of a route, kept beside the route (`config.openapi`) so
 * the document is read off the registered routes. The request parts are the contracts the
 * handler parses with; the errors that every route of its kind gives (auth, body, transport)
 * are added by the document, so `errors` lists only the route's own.
 */
export interface RouteDoc {
  /** The operationId: what generated clients name the call. */
  id: string;
  tag: string;
  summary: string;
  description?: string;
  params?: z.ZodType;
  /** A description per path or query parameter. */
  paramDescriptions?: Record<string, string>;
  query?: z.ZodType;
  headers?: Record<string, HeaderDoc>;
  body?: {
    schema: z.ZodType;
    /** False for a body that may be left out (its fields then take their defaults); default true. */
    required?: boolean;
    description?: string;
    examples?: AnswerDoc['examples'];
    /** Other media types the body may come as, beside JSON (the send route's NDJSON): each a text with an example. */
    textTypes?: Record<string, { description: string; example: string }>;
  };
  answers: Record<number, AnswerDoc>;
  errors: readonly ErrorCode[];
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route's entry in the OpenAPI document. */
    openapi?: RouteDoc;
    /** Set by the scope that guards the route (http/auth.ts); absent: public. */
    auth?: RouteAuth;
  }
}

/** Marks every route registered in `scope` from now on as guarded by `auth`, for the document. */
export function markAuth(scope: FastifyInstance, auth: RouteAuth): void {
  scope.addHook('onRoute', (route) => {
    route.config = { ...route.config, auth };
  });
}
