import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routesOf } from '../src/app.ts';
import { ERROR_CODES, type ErrorCode } from '../src/errors.ts';
import { CODES_OF_NO_ROUTE, openApiPath, type OpenApiDocument } from '../src/openapi/document.ts';
import { answerOf } from './support/harness.ts';
import { startInternalTestApi, type InternalTestApi } from './support/internal-harness.ts';

let api: InternalTestApi;
let publicDoc: OpenApiDocument;
let internalDoc: OpenApiDocument;

beforeAll(async () => {
  api = await startInternalTestApi();
  const served = answerOf(await api.app.inject({ method: 'GET', url: '/openapi.json' }));
  expect(served.status).toBe(200);
  publicDoc = served.body as OpenApiDocument;
  const internal = answerOf(await api.internal.inject({ method: 'GET', url: '/internal/openapi.json', headers: { authorization: `Bearer ${api.secret}` } }));
  expect(internal.status).toBe(200);
  internalDoc = internal.body as OpenApiDocument;
}, 60_000);

afterAll(async () => {
  await api?.close();
});

/** Every (method, path) an app registered, HEAD aside (Fastify's echo of each GET). */
const registered = (app: FastifyInstance) => routesOf(app).filter((r) => r.method !== 'HEAD').map((r) => `${r.method} ${openApiPath(r.url)}`).sort();

const documented = (doc: OpenApiDocument) => Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`)).sort();

/** The error codes each documented answer names (its examples, one per code), by operation and status. */
function documentedErrors(doc: OpenApiDocument): Array<{ operation: string; status: number; code: string }> {
  return Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).flatMap(([method, op]) =>
      Object.entries(op.responses).flatMap(([status, response]) => {
        const json = (response.content as Record<string, { schema?: { $ref?: string }; examples?: Record<string, unknown> }> | undefined)?.['application/json'];
        // Answers such as /readyz's 503 are in their route's own contract, not errors.
        if (json?.schema?.$ref !== '#/components/schemas/Error') return [];
        const examples = json.examples ?? {};
        return Object.keys(examples).map((code) => ({ operation: `${method.toUpperCase()} ${path}`, status: Number(status), code }));
      }),
    ),
  );
}

describe('the OpenAPI documents', () => {
  it('are valid OpenAPI 3.1, every $ref resolving', async () => {
    for (const doc of [publicDoc, internalDoc]) {
      const validator = new Validator();
      const result = await validator.validate(structuredClone(doc) as unknown as Record<string, unknown>);
      expect(result.errors ?? []).toEqual([]);
      expect(result.valid).toBe(true);
      expect(validator.version).toBe('3.1');
      expect(() => validator.resolveRefs()).not.toThrow();
    }
  });

  it("carry the release's version", () => {
    const apiPackage = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(publicDoc.info.version).toBe(apiPackage.version);
    expect(internalDoc.info.version).toBe(apiPackage.version);
  });

  it('document every route the apps registered, and no other', () => {
    expect(documented(publicDoc)).toEqual(registered(api.app));
    expect(documented(internalDoc)).toEqual(registered(api.internal));
    expect(documented(publicDoc)).toEqual(expect.arrayContaining(['POST /v1/sinks/{sink}', 'GET /openapi.json', 'GET /docs']));
    expect(documented(publicDoc).filter((route) => route.includes(' /internal/'))).toEqual([]);
  });

  it('name every error code of the registry, each under its own status, with an example', () => {
    const errors = [...documentedErrors(publicDoc), ...documentedErrors(internalDoc)];
    expect(errors.filter((e) => ERROR_CODES[e.code as ErrorCode]?.status !== e.status)).toEqual([]);
    const named = new Set(errors.map((e) => e.code));
    const missing = (Object.keys(ERROR_CODES) as ErrorCode[]).filter((code) => !named.has(code) && !CODES_OF_NO_ROUTE.includes(code));
    expect(missing).toEqual([]);
    // The two no route answers with are in the registry's table of the document.
    expect(publicDoc['x-error-codes'].map((e) => e.code)).toEqual(Object.keys(ERROR_CODES));
    expect(publicDoc['x-error-codes'].filter((e) => e.retry_after).map((e) => e.code).sort()).toEqual(['backlog_full', 'batch_in_progress', 'catalog_unavailable', 'database_unavailable', 'intake_busy', 'intake_unavailable']);
  });

  it('give an example of every JSON body and answer, each checked against its contract when built', () => {
    const missing: string[] = [];
    for (const doc of [publicDoc, internalDoc]) {
      for (const [path, ops] of Object.entries(doc.paths)) {
        for (const [method, op] of Object.entries(ops)) {
          const bodies = { body: op.requestBody, ...op.responses } as Record<string, { content?: Record<string, { schema?: { $ref?: string }; examples?: object }> } | undefined>;
          for (const [what, part] of Object.entries(bodies)) {
            // Bodies with a contract; /openapi.json's own answer has none.
            const json = part?.content?.['application/json'];
            if (json?.schema?.$ref && Object.keys(json.examples ?? {}).length === 0) missing.push(`${method} ${path} ${what}`);
          }
        }
      }
    }
    expect(missing).toEqual([]);
  });

  it('give the send route for a device author: key, Idempotency-Key, body, every answer, Retry-After', () => {
    const send = publicDoc.paths['/v1/sinks/{sink}']!.post!;
    expect(send.security).toEqual([{ sendKey: [] }]);
    expect(send.parameters).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'Idempotency-Key', in: 'header', required: false, description: expect.stringMatching(/batch_ids: content/) })]));
    expect(send.requestBody).toMatchObject({
      required: true,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/SendBatch' } }, 'application/x-ndjson': { schema: { type: 'string' } }, 'application/jsonl': { schema: { type: 'string' } } },
    });
    expect(send.parameters).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'Content-Encoding', in: 'header', schema: { type: 'string', enum: ['gzip', 'deflate', 'zstd', 'identity'] } })]));
    expect(Object.keys(send.responses).sort()).toEqual(['200', '202', '400', '401', '403', '408', '409', '413', '415', '429', '431', '500', '503']);
    expect(send.responses['200']!.headers).toHaveProperty('Idempotent-Replayed');
    for (const status of ['429', '503', '409']) expect(send.responses[status]!.headers).toHaveProperty('Retry-After');
    const codes = documentedErrors(publicDoc).filter((e) => e.operation === 'POST /v1/sinks/{sink}').map((e) => e.code);
    expect(codes).toEqual(expect.arrayContaining(['unauthorized', 'send_only', 'idempotency_key_missing', 'idempotency_key_invalid', 'invalid_json', 'not_an_array', 'empty_batch', 'body_too_large', 'unsupported_media_type', 'unsupported_encoding', 'invalid_compressed_body', 'batch_id_conflict', 'batch_in_progress', 'quota_exceeded', 'backlog_full', 'intake_busy', 'intake_unavailable']));
    // A send key opens only this route.
    expect(codes).not.toContain('forbidden');
    expect(publicDoc.components.securitySchemes).toMatchObject({ sendKey: { type: 'http', scheme: 'bearer' }, readKey: {}, writeKey: {}, adminKey: {} });
    expect(publicDoc.paths['/v1/keys']!.post!.security).toEqual([{ adminKey: [] }]);
    expect(publicDoc.paths['/healthz']!.get!.security).toEqual([]);
  });

  it('give the rotation its options as an optional strict JSON body, the query form beside it', () => {
    const rotate = publicDoc.paths['/v1/sinks/{sink}/send-key/rotate']!.post!;
    expect(rotate.requestBody).toMatchObject({ required: false, content: { 'application/json': { schema: { $ref: '#/components/schemas/RotateSendKeyRequest' } } } });
    expect((publicDoc.components.schemas as Record<string, unknown>).RotateSendKeyRequest).toMatchObject({
      type: 'object',
      additionalProperties: false,
      properties: { overlap_seconds: { type: 'integer', minimum: 0, maximum: 604_800 }, finish: { type: 'boolean' } },
    });
    expect(rotate.parameters).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'overlap_seconds', in: 'query', required: false, description: expect.stringMatching(/compatibility/) })]));
  });

  it('serves the HTML reference with every route and code, and nothing from outside', async () => {
    const page = await api.app.inject({ method: 'GET', url: '/docs' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    for (const ops of Object.values(publicDoc.paths)) for (const op of Object.values(ops)) expect(page.body).toContain(`id="${op.operationId}"`);
    for (const code of Object.keys(ERROR_CODES)) expect(page.body).toContain(`<code>${code}</code>`);
    expect(page.body).not.toMatch(/<script|(src|href)="https?:/);
  });

  it('keeps the internal document behind the bootstrap secret', async () => {
    const answer = answerOf(await api.internal.inject({ method: 'GET', url: '/internal/openapi.json' }));
    expect(answer.status).toBe(401);
    expect(answerOf(await api.app.inject({ method: 'GET', url: '/internal/openapi.json' })).status).toBe(404);
  });
});
