import * as contracts from '@tablemere/contracts';
import { z } from 'zod';
import type { RouteEntry } from '../app.ts';
import { ERROR_CODES, type ErrorCode } from '../errors.ts';
import { exampleOf } from './examples.ts';
import type { AnswerDoc, HeaderDoc, RouteAuth, RouteDoc } from './route-doc.ts';
import apiPackage from '../../package.json' with { type: 'json' };

type Json = Record<string, unknown>;

export interface DocumentInfo {
  title: string;
  description: string;
  /** The API's public URL, for `servers`; absent: the document's own origin. */
  serverUrl?: string;
  /** The order of the tags (groups of routes) in the document; others follow. */
  tags?: readonly string[];
}

/** The OpenAPI 3.1 document as built here: the fields the HTML page and the tests read, the rest loose. */
export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string; description: string };
  tags: Array<{ name: string }>;
  paths: Record<string, Record<string, Operation>>;
  components: Json;
  'x-error-codes': Array<{ code: ErrorCode; status: number; message: string; retry_after: boolean }>;
  [key: string]: unknown;
}

export interface Operation {
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  security: Array<Record<string, string[]>>;
  parameters?: Json[];
  requestBody?: Json;
  responses: Record<string, Json & { description: string }>;
  'x-auth': RouteAuth;
}

/** The version of the document, not of the service: bumped when a route's contract changes. */
/** The release's version (CHANGELOG.md), so a generated client names what it was made from. */
const DOCUMENT_VERSION = apiPackage.version;

/** Codes no operation lists: `not_found` answers a path no route has, `client_aborted` is logged, never sent. */
export const CODES_OF_NO_ROUTE: readonly ErrorCode[] = ['not_found', 'client_aborted'];

/** Each contracts export by its schema, so a schema a route uses is a named component. */
const NAMES = new Map<unknown, string>(Object.entries(contracts).filter(([, value]) => value instanceof z.ZodType).map(([name, value]) => [value, name]));

const API_KEY_FORMAT = 'tm_key_<12 hex>_<43 chars>';
/** Said once per scheme: keys made before the `tm_` prefixes keep working. */
const OLDER_KEYS = (prefix: string) => ` Older keys with the deprecated prefix ${prefix} keep working.`;
const SECURITY_SCHEMES: Record<Exclude<RouteAuth, 'none'>, { name: string; scheme: Json }> = {
  read: { name: 'readKey', scheme: { type: 'http', scheme: 'bearer', bearerFormat: API_KEY_FORMAT, description: 'An API key of level read, write or admin (levels are ordered read < write < admin; a key opens every route at or below its level). Shown once when created; stored as its SHA-256.' + OLDER_KEYS(contracts.DEPRECATED_API_KEY_PREFIX) } },
  write: { name: 'writeKey', scheme: { type: 'http', scheme: 'bearer', bearerFormat: API_KEY_FORMAT, description: 'An API key of level write or admin; a read key gets 403 forbidden.' + OLDER_KEYS(contracts.DEPRECATED_API_KEY_PREFIX) } },
  admin: { name: 'adminKey', scheme: { type: 'http', scheme: 'bearer', bearerFormat: API_KEY_FORMAT, description: "An API key of level admin (the project owner's); lower levels get 403 forbidden." + OLDER_KEYS(contracts.DEPRECATED_API_KEY_PREFIX) } },
  send_key: { name: 'sendKey', scheme: { type: 'http', scheme: 'bearer', bearerFormat: 'tm_send_<the sink id\'s 12 hex>_<43 chars>', description: "A sink's send-only key, shown once by POST /v1/sinks. It opens exactly one route, POST /v1/sinks/{sink_id} of its own sink; anywhere else it is 403 send_only. Deleting the sink revokes it." + OLDER_KEYS(contracts.DEPRECATED_SEND_KEY_PREFIX) } },
  bootstrap_secret: { name: 'rollerSecret', scheme: { type: 'http', scheme: 'bearer', description: 'The TABLEMERE_BOOTSTRAP_SECRET shared by the API and its rollers.' } },
};

const REQUEST_ID_HEADER = { description: 'The request id (the caller\'s X-Request-Id when it is 1-64 of A-Z a-z 0-9 . _ : -, else a new UUID); errors repeat it as request_id.', schema: { type: 'string' } };

/** The errors every route of its kind gives, beside its own. */
function commonErrors(method: string, auth: RouteAuth): ErrorCode[] {
  // invalid_request: a malformed request or text Postgres cannot store, on any route; the rest come from Node.
  const codes: ErrorCode[] = ['invalid_request', 'request_timeout', 'headers_too_large', 'internal_error'];
  if (auth === 'bootstrap_secret') codes.push('unauthorized');
  else if (auth === 'send_key') codes.push('unauthorized', 'send_only');
  else if (auth !== 'none') codes.push('unauthorized', 'send_only', ...(auth === 'read' ? [] : (['forbidden'] as const)));
  if (method !== 'GET') codes.push('invalid_json', 'unsupported_media_type', 'body_too_large');
  // Every keyed route reads its key from Postgres.
  if (auth !== 'none') codes.push('database_unavailable');
  return codes;
}

/** Every code a route can answer, its own and its kind's, each once, in registry order. */
export function errorCodesOf(method: string, auth: RouteAuth, doc: RouteDoc): ErrorCode[] {
  const codes = new Set<ErrorCode>([...commonErrors(method, auth), ...doc.errors]);
  return (Object.keys(ERROR_CODES) as ErrorCode[]).filter((code) => codes.has(code) && !CODES_OF_NO_ROUTE.includes(code));
}

function toJsonSchema(schema: z.ZodType, io: 'input' | 'output'): Json {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Json;
  return rest;
}

/** Builds components as routes name them: a contracts schema by its export name, any other inline. */
class Schemas {
  readonly components: Record<string, Json> = {};

  ref(schema: z.ZodType, io: 'input' | 'output'): Json {
    const json = toJsonSchema(schema, io);
    const name = NAMES.get(schema);
    if (name === undefined) return json;
    // One name, one JSON Schema: a contract used as a request and as an answer must read the same both ways.
    if (this.components[name] !== undefined && !same(this.components[name], json)) {
      throw new Error(`${name} is a request and an answer with different JSON Schemas; give one of them its own contract`);
    }
    this.components[name] = json;
    return { $ref: `#/components/schemas/${name}` };
  }
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

function headers(docs: Record<string, HeaderDoc> | undefined): Json {
  return Object.fromEntries(Object.entries(docs ?? {}).map(([name, { required, ...header }]) => [name, { ...header, ...(required ? { required } : {}) }]));
}

/**
 * The examples of a body: those written by hand, each checked against the contract (a wrong
 * one stops the build), else one made from the schema when the contract takes it.
 */
function examplesFor(schema: z.ZodType, given: AnswerDoc['examples'], io: 'input' | 'output', where: string): AnswerDoc['examples'] {
  for (const [name, example] of Object.entries(given ?? {})) {
    const checked = schema.safeParse(example.value);
    if (!checked.success) throw new Error(`${where}: example ${name} does not match its contract: ${checked.error.message}`);
  }
  if (given) return given;
  const made = exampleOf(toJsonSchema(schema, io));
  return schema.safeParse(made).success ? { example: { summary: 'An example', value: made } } : undefined;
}

function answer(doc: AnswerDoc, schemas: Schemas, where: string): Json & { description: string } {
  const examples = doc.schema ? examplesFor(doc.schema, doc.examples, 'output', where) : undefined;
  const content = doc.text
    ? { [doc.text]: { schema: { type: doc.text === 'application/json' ? 'object' : 'string' } } }
    : doc.schema
      ? { 'application/json': { schema: schemas.ref(doc.schema, 'output'), ...(examples ? { examples } : {}) } }
      : undefined;
  return {
    description: doc.description,
    headers: { 'X-Request-Id': { $ref: '#/components/headers/RequestId' }, ...headers(doc.headers) },
    ...(content ? { content } : {}),
  };
}

/** One answer per error status, naming each code it stands for, with an example of each. */
function errorAnswers(codes: ErrorCode[]): Record<string, Json & { description: string }> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) byStatus.set(ERROR_CODES[code].status, [...(byStatus.get(ERROR_CODES[code].status) ?? []), code]);
  return Object.fromEntries(
    [...byStatus].map(([status, group]) => {
      const retrying = group.filter((code) => 'retryAfter' in ERROR_CODES[code]);
      const description = group.map((code) => `\`${code}\`: ${ERROR_CODES[code].message}`).join('\n\n');
      const examples = Object.fromEntries(
        group.map((code) => [code, { summary: code, value: { error: { code, message: ERROR_CODES[code].message, request_id: '0f5c2f4e-8a51-4c1e-9d07-2b8e3a6c1d90' } } }]),
      );
      return [
        String(status),
        {
          description,
          headers: {
            'X-Request-Id': { $ref: '#/components/headers/RequestId' },
            ...(retrying.length > 0 ? { 'Retry-After': { $ref: '#/components/headers/RetryAfter', description: `Sent with ${retrying.map((c) => `\`${c}\``).join(', ')}: whole seconds to wait before sending the same request again.` } } : {}),
          },
          content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' }, examples } },
        },
      ];
    }),
  );
}

function parameters(doc: RouteDoc): Json[] {
  const of = (schema: z.ZodType | undefined, where: 'path' | 'query'): Json[] => {
    if (!schema) return [];
    const json = toJsonSchema(schema, 'input') as { properties?: Record<string, Json>; required?: string[] };
    return Object.entries(json.properties ?? {}).map(([name, property]) => ({
      name,
      in: where,
      required: where === 'path' || (json.required ?? []).includes(name),
      ...(doc.paramDescriptions?.[name] ? { description: doc.paramDescriptions[name] } : {}),
      schema: property,
    }));
  };
  const header = Object.entries(doc.headers ?? {}).map(([name, { required, example, ...rest }]) => ({ name, in: 'header', required: required ?? false, ...rest, ...(example ? { example } : {}) }));
  return [...of(doc.params, 'path'), ...of(doc.query, 'query'), ...header];
}

function operation(route: RouteEntry, doc: RouteDoc, schemas: Schemas): Operation {
  const auth = route.config().auth ?? 'none';
  const responses: Operation['responses'] = {};
  const where = `${route.method} ${route.url}`;
  for (const [status, given] of Object.entries(doc.answers)) responses[status] = answer(given, schemas, `${where} ${status}`);
  for (const [status, error] of Object.entries(errorAnswers(errorCodesOf(route.method, auth, doc)))) {
    if (responses[status]) throw new Error(`${where}: status ${status} is both an answer and an error`);
    responses[status] = error;
  }
  const params = parameters(doc);
  const bodyExamples = doc.body ? examplesFor(doc.body.schema, doc.body.examples, 'input', `${where} body`) : undefined;
  return {
    operationId: doc.id,
    summary: doc.summary,
    ...(doc.description ? { description: doc.description } : {}),
    tags: [doc.tag],
    security: auth === 'none' ? [] : [{ [SECURITY_SCHEMES[auth].name]: [] }],
    ...(params.length > 0 ? { parameters: params } : {}),
    ...(doc.body
      ? {
          requestBody: {
            required: doc.body.required ?? true,
            ...(doc.body.description ? { description: doc.body.description } : {}),
            content: {
              'application/json': { schema: schemas.ref(doc.body.schema, 'input'), ...(bodyExamples ? { examples: bodyExamples } : {}) },
              ...Object.fromEntries(Object.entries(doc.body.textTypes ?? {}).map(([type, text]) => [type, { schema: { type: 'string', description: text.description }, example: text.example }])),
            },
          },
        }
      : {}),
    responses,
    'x-auth': auth,
  };
}

/** `/v1/sinks/:sink` as OpenAPI writes it: `/v1/sinks/{sink}`. */
export const openApiPath = (url: string) => url.replace(/:([A-Za-z_]+)/g, '{$1}');

/**
 * The OpenAPI 3.1 document of the routes given (an app's `routesOf`), from the contracts
 * each route declares in `config.openapi` and the error registry. HEAD routes are left out:
 * Fastify answers HEAD for every GET, with the GET's headers and no body. A route without a
 * declaration fails the build, so a route cannot be left out by forgetting it.
 */
export function buildDocument(routes: readonly RouteEntry[], info: DocumentInfo): OpenApiDocument {
  const schemas = new Schemas();
  const paths: OpenApiDocument['paths'] = {};
  const auths = new Set<RouteAuth>();
  for (const route of routes) {
    if (route.method === 'HEAD') continue;
    const doc = route.config().openapi;
    if (!doc) throw new Error(`${route.method} ${route.url} has no OpenAPI declaration (config.openapi)`);
    auths.add(route.config().auth ?? 'none');
    (paths[openApiPath(route.url)] ??= {})[route.method.toLowerCase()] = operation(route, doc, schemas);
  }
  const used = [...auths].filter((auth): auth is Exclude<RouteAuth, 'none'> => auth !== 'none');
  return {
    openapi: '3.1.1',
    info: { title: info.title, version: DOCUMENT_VERSION, description: info.description },
    ...(info.serverUrl ? { servers: [{ url: info.serverUrl }] } : {}),
    tags: [...new Set([...(info.tags ?? []), ...Object.values(paths).flatMap((ops) => Object.values(ops).flatMap((op) => op.tags))])].map((name) => ({ name })),
    paths,
    components: {
      schemas: { Error: toJsonSchema(contracts.ErrorBody, 'output'), ...schemas.components },
      headers: {
        RequestId: REQUEST_ID_HEADER,
        RetryAfter: { description: 'Whole seconds to wait before sending the same request again.', schema: { type: 'integer', minimum: 1 }, example: 5 },
      },
      securitySchemes: Object.fromEntries(used.map((auth) => [SECURITY_SCHEMES[auth].name, SECURITY_SCHEMES[auth].scheme])),
    },
    'x-error-codes': (Object.keys(ERROR_CODES) as ErrorCode[]).map((code) => ({ code, status: ERROR_CODES[code].status, message: ERROR_CODES[code].message, retry_after: 'retryAfter' in ERROR_CODES[code] })),
  };
}
