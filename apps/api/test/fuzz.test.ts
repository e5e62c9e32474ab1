import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { deflateSync, gzipSync, zstdCompressSync } from 'node:zlib';
import { ErrorBody } from '@tablemere/contracts';
import { query } from '@tablemere/db';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routesOf } from '../src/app.ts';
import { ERROR_CODES } from '../src/errors.ts';
import { answerOf, dropNamespace, suffix } from './support/harness.ts';
import { servedDocuments, type ServedDocuments } from './support/openapi.ts';
import { startInternalTestApi, type InternalTestApi } from './support/internal-harness.ts';
import { createSink, createTable } from './support/sinks.ts';

/**
 * Random and hand-made bad requests on every route of both apps (the list comes from the apps
 * themselves, so a new route is covered): invalid Unicode in every text field, bad JSON,
 * wrong types, huge values, wrong content types, bad auth. No answer may be a 5xx, and every
 * error must be a registered code with its status. The seed is printed; set
 * TABLEMERE_FUZZ_SEED to replay a run.
 */

const SEED = Number(process.env.TABLEMERE_FUZZ_SEED ?? 20261201);
const RANDOM_REQUESTS = 2_500;

/** mulberry32: small, fast, and the same sequence for the same seed everywhere. */
function generator(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = generator(SEED);
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

/** Strings no text field may take (invalid Unicode), and others that are merely odd or huge. */
const INVALID_TEXT = ['\ud800', '\udfff', 'a\ud800b', '\u0000', 'a\u0000b', '\udc00\ud800'];
const ODD_TEXT = ['', ' ', 'Bad Name!', '\uffff', '\u202e', '💥', '../../x', "x'; --", 'x'.repeat(70_000), 'é'.repeat(300)];
const ODD_VALUES: unknown[] = [null, 0, -1, 1.5, 1e308, -1e308, 2 ** 63, true, [], {}, [[[]]], { a: { b: {} } }];

/** Path segments, sent as written (percent-escapes included). */
const BAD_SEGMENTS = ['%00', 'a%00b', '%ED%A0%80', '%C0%AF', '%FF', '%E2%82', 'x'.repeat(3_000), '..', '%2e%2e', '%25', 'Bad%20Name', encodeURIComponent('💥'), 'snk_000000000000', '0'];
const BAD_QUERIES = ['warehouse=%00', 'warehouse=%ED%A0%80', 'namespace=a%00', 'limit=-1', 'limit=1e309', 'limit=%00', 'since=%ED%A0%80', 'cursor=%00', 'cursor=' + 'x'.repeat(5_000), 'due=maybe', 'state=%00', 'x=1', 'include_deleted=yes', 'warehouse[]=a&warehouse[]=b', '%FF=%FF',
  'overlap_seconds=604801', 'overlap_seconds=-1', 'overlap_seconds=1e3', 'overlap_seconds=%00', 'overlap_seconds=1&overlap_seconds=2', 'finish=%00'];
const BAD_PAYLOADS: Array<string | Buffer> = [
  '{', '[', '{"a":}', 'nul', '"\\ud800"', '{"name":"\\ud800"}', '{"name":"a\\u0000"}', '[1,2', '1e999999', '{"a":1,"a":2}',
  '['.repeat(10_000), '{"__proto__":{"x":1}}', '123456789012345678901234567890', '\ufeff{}', '[]', '[1,"a",null]', '{}', 'null', '"x"',
  Buffer.from([0xff, 0xfe, 0x7b, 0x7d]), Buffer.from([0x7b, 0x22, 0x6e, 0x22, 0x3a, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x7d]),
  JSON.stringify([{ x: 1, who: '\ud800' }, { x: '\u0000' }]), JSON.stringify([{ ['\ud800']: 1 }]),
  // Deep nesting, closed and valid: tens of thousands of levels, and just past the limits (64 for control bodies, 512 for a batch).
  `${'{"a":'.repeat(60_000)}1${'}'.repeat(60_000)}`, `${'['.repeat(100_000)}${']'.repeat(100_000)}`, `[${'{"a":'.repeat(600)}1${'}'.repeat(600)}]`,
  `${'{"a":['.repeat(40)}1${']}'.repeat(40)}`, `[${'"\\"['.repeat(20_000)}]`,
];

/** The send route's own bodies: NDJSON, compressed or not, whole or broken. */
const ndjsonLines = (n: number) => Array.from({ length: n }, (_, i) => JSON.stringify({ x: i, who: 'north' })).join('\n');
const SEND_BODIES: Array<{ type?: string; encoding?: string; payload: string | Buffer }> = [
  { type: 'application/x-ndjson', payload: `${ndjsonLines(3)}\n` },
  { type: 'application/jsonl', payload: `\n\n${ndjsonLines(2)}\r\n\r\n` },
  { type: 'application/x-ndjson', payload: '{"x":1}\n{"x":\n2}\n' },
  { type: 'application/x-ndjson', payload: '{"x":1} {"x":2}\n' },
  { type: 'application/x-ndjson', payload: '\n\n\n' },
  { type: 'application/x-ndjson', payload: '[{"x":1}]' },
  { type: 'application/x-ndjson', payload: Buffer.from([0x7b, 0x7d, 0x0a, 0xff, 0x0a]) },
  { type: 'application/x-ndjson', payload: `{"x":"${'y'.repeat(15 * 1024 * 1024)}"}\n{"x":1}\n${'{"x":2}\n'.repeat(200_000)}` },
  { type: 'application/x-ndjson', payload: `${'['.repeat(100_000)}${']'.repeat(100_000)}\n` },
  { type: 'application/jsonl', payload: '{"x":1}\n{"x":"\\ud800"}\n' },
  { encoding: 'gzip', payload: gzipSync('[{"x":1}]') },
  { encoding: 'deflate', payload: deflateSync('[{"x":1}]') },
  { encoding: 'zstd', payload: zstdCompressSync('[{"x":1}]') },
  { encoding: 'identity', payload: '[{"x":1}]' },
  { encoding: 'gzip', type: 'application/x-ndjson', payload: gzipSync(`${ndjsonLines(3)}\n`) },
  { encoding: 'gzip', payload: gzipSync('[{"x":1},{"x":2}]').subarray(0, 20) },
  { encoding: 'zstd', payload: zstdCompressSync('[{"x":1},{"x":2}]').subarray(0, 12) },
  { encoding: 'deflate', payload: gzipSync('[{"x":1}]') },
  { encoding: 'gzip', payload: '[{"x":1}]' },
  { encoding: 'gzip', payload: gzipSync(gzipSync('[{"x":1}]')) },
  { encoding: 'gzip, gzip', payload: gzipSync(gzipSync('[{"x":1}]')) },
  { encoding: 'gzip, zstd', payload: '[{"x":1}]' },
  { encoding: 'br', payload: '[{"x":1}]' },
  { encoding: 'compress', payload: '[{"x":1}]' },
  { encoding: '\u00ff', payload: '[{"x":1}]' },
  { encoding: 'gzip', payload: gzipSync(Buffer.alloc(20 * 1024 * 1024, 0x20)) },
  { encoding: 'zstd', payload: zstdCompressSync(Buffer.alloc(20 * 1024 * 1024, 0x20)) },
  { encoding: 'gzip', payload: gzipSync(`[${'{"a":'.repeat(600)}1${'}'.repeat(600)}]`) },
  { encoding: 'gzip', payload: Buffer.concat([gzipSync('[{"x":1},'), gzipSync('{"x":2}]')]) },
  { encoding: 'gzip', payload: Buffer.concat([gzipSync('[{"x":1}]'), Buffer.from('trailing')]) },
];
const CONTENT_TYPES = ['application/json', 'text/plain', 'application/json; charset=latin1', 'application/json; charset=utf-8', 'multipart/form-data; boundary=x', 'application/x-www-form-urlencoded', 'application/xml', 'application/jsonx', ''];

interface Sent {
  /** The route as registered, e.g. `POST /v1/sinks/:sink`. */
  route: string;
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: string | Buffer;
}

let api: InternalTestApi;
let namespace: string;
let readKey: string;
let keyId: string;
let sink: { id: string; name: string; send_key: string };
let publicApp: FastifyInstance;
const answers: Array<{ sent: Sent; status: number; code: string | undefined; text: string }> = [];
let documents: ServedDocuments;

beforeAll(async () => {
  console.log(`fuzz seed ${SEED} (TABLEMERE_FUZZ_SEED=${SEED} replays this run)`);
  api = await startInternalTestApi();
  publicApp = api.app;
  namespace = `fuzz_${suffix()}`;
  await createTable(api, namespace, 't');
  const created = await createSink(api.app, api.adminKey, { name: 'fuzz_in', table: `${namespace}.t` });
  sink = { id: created.id, name: created.name, send_key: created.send_key };
  const key = await api.app.inject({ method: 'POST', url: '/v1/keys', headers: { authorization: `Bearer ${api.adminKey}` }, payload: { name: 'reader', level: 'read' } });
  readKey = key.json<{ key: string }>().key;
  keyId = key.json<{ id: string }>().id;
  documents = await servedDocuments(publicApp, api.internal, api.secret);
}, 60_000);

afterAll(async () => {
  if (namespace) await dropNamespace(api.env, namespace).catch(() => undefined);
  await api?.close();
});

/** Valid values for each path parameter, by name (the fuzz mixes them with bad ones). */
function goodParams(): Record<string, string[]> {
  return {
    sink: [sink.id, sink.name],
    id: [sink.id, keyId],
    warehouse: ['garden'],
    table: [`${namespace}.t`],
    batch_id: ['b-1'],
    lease_id: [randomUUID()],
  };
}

/** A body the route accepts (or nearly), to mutate field by field; undefined: the route takes none. */
function validBody(method: string, url: string): unknown {
  const lease = { lease_id: randomUUID() };
  const bodies: Record<string, unknown> = {
    'POST /v1/keys': { name: 'k', level: 'read' },
    'POST /v1/warehouses': {
      name: 'fuzz-wh',
      rest_uri: 'http://127.0.0.1:9/catalog',
      warehouse: 's3://warehouse',
      auth: { type: 'oauth2', client_id: 'id', client_secret: 'secret', scope: 'catalog' },
      s3: { endpoint: 'http://127.0.0.1:9', region: 'us-east-1', access_key_id: 'a', secret_access_key: 'b' },
    },
    'POST /v1/warehouses/:warehouse/tables': { namespace, name: 't2', columns: [{ name: 'x', type: 'long', required: true }] },
    'POST /v1/sinks': { name: 'fuzz2_in', table: `${namespace}.t`, warehouse: 'garden', roll_seconds: 60 },
    'POST /v1/sinks/:sink': [{ x: 1, who: 'north' }],
    'POST /internal/sinks/:id/lease': { roller_id: 'fuzz', ttl_seconds: 30 },
    'POST /internal/sinks/:id/rolls': { ...lease, snapshot_id: '1', batch_ids: ['b-1'] },
    'POST /internal/sinks/:id/roll': {
      ...lease, snapshot_id: null, batches: [], rows: 0, rejected_rows: 0, seconds: 1, attempts: 1,
      started_at: new Date().toISOString(), outcome: 'failed', error: 'boom',
    },
    'POST /internal/sinks/:id/upkeep': {
      ...lease, started_at: new Date().toISOString(), seconds: 1, outcome: 'failed', snapshot_ids: [],
      files: { data_before: 0, data_after: 0, manifests_before: 0, manifests_after: 0 }, rewritten: { files: 0, bytes: 0, rows: 0 },
      expired_snapshots: 0, deleted_files: { data: 0, manifests: 0, manifest_lists: 0 }, snapshots_kept: 0, error: { code: 'x', message: 'y' },
    },
    'PUT /internal/sinks/:id/state': { ...lease, state: 'active', reason: 'fuzz' },
  };
  return bodies[`${method} ${url}`];
}

/** Every leaf of `value` with its path. */
function leaves(value: unknown, path: Array<string | number> = []): Array<Array<string | number>> {
  if (Array.isArray(value)) return value.flatMap((item, index) => leaves(item, [...path, index]));
  if (value !== null && typeof value === 'object') return Object.entries(value).flatMap(([key, item]) => leaves(item, [...path, key]));
  return [path];
}

/** `value` with the leaf at `path` replaced by `replacement`. */
function replaced(value: unknown, path: Array<string | number>, replacement: unknown): unknown {
  if (path.length === 0) return replacement;
  const [head, ...rest] = path;
  const copy = (Array.isArray(value) ? [...value] : { ...(value as object) }) as Record<string | number, unknown>;
  copy[head!] = replaced(copy[head!], rest, replacement);
  return copy;
}

/** A random JSON value, now and then holding invalid text. */
function randomJson(depth = 0): unknown {
  const roll = random();
  if (depth > 3 || roll < 0.3) return pick([...ODD_VALUES.filter((v) => typeof v !== 'object'), pick(INVALID_TEXT), pick(ODD_TEXT).slice(0, 200)]);
  if (roll < 0.6) return Array.from({ length: Math.floor(random() * 4) }, () => randomJson(depth + 1));
  return Object.fromEntries(Array.from({ length: Math.floor(random() * 4) }, () => [pick(['name', 'level', 'table', 'warehouse', 'x', pick(INVALID_TEXT)]), randomJson(depth + 1)]));
}

function fillUrl(url: string, override?: { param: string; value: string }): string {
  const good = goodParams();
  return url.replace(/:([A-Za-z_]+)/g, (_, name: string) => (override?.param === name ? override.value : (good[name]?.[0] ?? 'x')));
}

function authFor(app: FastifyInstance, url: string): string[] {
  const internal = app === api.internal;
  if (internal) return [`Bearer ${api.secret}`, 'Bearer wrong-secret-wrong-secret', ''];
  const sendRoute = url === '/v1/sinks/:sink';
  const own = sendRoute ? `Bearer ${sink.send_key}` : `Bearer ${api.adminKey}`;
  return [own, `Bearer ${readKey}`, sendRoute ? `Bearer ${api.adminKey}` : `Bearer ${sink.send_key}`, '', 'Bearer', 'Basic YTpi', `Bearer tm_key_000000000000_${'A'.repeat(43)}`, `Bearer al_key_000000000000_${'A'.repeat(43)}`,
    `Bearer tm_send_${sink.id.slice(4)}_${'A'.repeat(43)}`, `Bearer al_send_${sink.id.slice(4)}_${'A'.repeat(43)}`, `Bearer ${'x'.repeat(10_000)}`, 'Bearer \u00ff\u00fe', 'bearer  ' + api.adminKey + '  trailing'];
}

async function fire(app: FastifyInstance, sent: Sent): Promise<void> {
  let response;
  try {
    response = await app.inject({ method: sent.method as 'GET', url: sent.url, headers: sent.headers, ...(sent.payload === undefined ? {} : { payload: sent.payload }) });
  } catch {
    // The request could not even be written (a header value Node refuses): no answer to judge.
    return;
  }
  const answer = answerOf(response);
  const parsed = ErrorBody.safeParse(answer.body);
  answers.push({ sent, status: answer.status, code: parsed.success ? parsed.data.error.code : undefined, text: answer.text.slice(0, 300) });
}

function request(app: FastifyInstance, method: string, url: string, parts: { auth?: string; type?: string; encoding?: string; payload?: string | Buffer; query?: string; param?: { param: string; value: string } } = {}): Promise<void> {
  const auth = parts.auth ?? authFor(app, url)[0]!;
  const headers: Record<string, string> = {};
  if (parts.encoding !== undefined) headers['content-encoding'] = parts.encoding;
  if (auth !== '') headers.authorization = auth;
  if (url === '/v1/sinks/:sink') headers['idempotency-key'] = `fuzz-${Math.floor(random() * 1e9)}`;
  if (parts.payload !== undefined && parts.type !== '') headers['content-type'] = parts.type ?? 'application/json';
  const path = fillUrl(url, parts.param) + (parts.query ? `?${parts.query}` : '');
  return fire(app, { route: `${method} ${url}`, method, url: path, headers, ...(parts.payload === undefined ? {} : { payload: parts.payload }) });
}

/** The hand-made cases of one route: each bad parameter, query, auth, content type, payload, and every leaf of its body made invalid. */
async function handMade(app: FastifyInstance, method: string, url: string): Promise<void> {
  const body = validBody(method, url);
  const withBody = method === 'POST' || method === 'PUT' || method === 'DELETE';
  const payload = body === undefined ? undefined : JSON.stringify(body);
  for (const [, param] of url.matchAll(/:([A-Za-z_]+)/g)) {
    for (const value of BAD_SEGMENTS) await request(app, method, url, { param: { param: param!, value }, ...(payload ? { payload } : {}) });
  }
  for (const q of BAD_QUERIES) await request(app, method, url, { query: q });
  for (const auth of authFor(app, url)) await request(app, method, url, { auth, ...(payload ? { payload } : {}) });
  if (!withBody) return;
  for (const type of CONTENT_TYPES) await request(app, method, url, { type, payload: payload ?? '{}' });
  for (const bad of BAD_PAYLOADS) await request(app, method, url, { payload: bad });
  if (url === '/v1/sinks/:sink') for (const sent of SEND_BODIES) await request(app, method, url, sent);
  else for (const encoding of ['gzip', 'zstd', 'br']) await request(app, method, url, { encoding, payload: gzipSync(payload ?? '{}') });
  // Over the control routes' 1 MiB, and over the send route's 16 MiB.
  const huge = url === '/v1/sinks/:sink' ? 16 * 1024 * 1024 + 10 : 1024 * 1024 + 10;
  await request(app, method, url, { payload: `[${'1,'.repeat(huge / 2)}1]` });
  if (body === undefined) return;
  for (const path of leaves(body)) {
    for (const value of [...INVALID_TEXT, pick(ODD_TEXT), pick(ODD_VALUES)]) {
      await request(app, method, url, { payload: JSON.stringify(replaced(body, path, value)) });
    }
    // The key itself invalid.
    if (path.length > 0 && typeof path.at(-1) === 'string') {
      const parent = path.slice(0, -1);
      const renamed = replaced(body, parent, { ...(parent.reduce<any>((v, k) => v[k], body) as object), [pick(INVALID_TEXT)]: 1 });
      await request(app, method, url, { payload: JSON.stringify(renamed) });
    }
  }
}

describe('fuzz: bad requests on every route', () => {
  it('never answers 5xx, and every error is a registered code with its status', async () => {
    const started = Date.now();
    const apps = [publicApp, api.internal];
    const routes = apps.flatMap((app) => routesOf(app).map((route) => ({ app, ...route })));
    // Destructive routes last, so the rest still find the sink and the keys.
    routes.sort((a, b) => Number(a.method === 'DELETE') - Number(b.method === 'DELETE'));
    expect(routes.length).toBeGreaterThan(20);
    // The rotation takes the default overlap here (a day), so the sink's first key keeps working for the send route's cases.
    expect(routes.map((r) => `${r.method} ${r.url}`)).toContain('POST /v1/sinks/:sink/send-key/rotate');
    for (const route of routes) await handMade(route.app, route.method, route.url);
    const handMadeCount = answers.length;
    for (let i = 0; i < RANDOM_REQUESTS; i++) {
      const route = pick(routes.filter((r) => r.method !== 'DELETE'));
      const good = goodParams();
      const params = [...route.url.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1]!);
      const param = params.length > 0 && random() < 0.3 ? { param: pick(params), value: pick([...BAD_SEGMENTS, ...(good[pick(params)] ?? [])]) } : undefined;
      const body = validBody(route.method, route.url);
      const payloadKind = random();
      const payload =
        payloadKind < 0.3 ? JSON.stringify(randomJson())
        : payloadKind < 0.5 ? pick(BAD_PAYLOADS)
        : payloadKind < 0.8 && body !== undefined ? JSON.stringify(replaced(body, pick(leaves(body)), random() < 0.5 ? pick(INVALID_TEXT) : randomJson()))
        : undefined;
      await request(route.app, route.method, route.url, {
        auth: random() < 0.8 ? authFor(route.app, route.url)[0]! : pick(authFor(route.app, route.url)),
        ...(random() < 0.2 ? { query: pick(BAD_QUERIES) } : {}),
        ...(random() < 0.15 ? { type: pick(CONTENT_TYPES) } : {}),
        ...(param ? { param } : {}),
        ...(payload === undefined || route.method === 'GET' ? {} : { payload }),
      });
    }
    const statuses = new Map<number, number>();
    for (const a of answers) statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
    console.log(
      `fuzz seed ${SEED}: ${routes.length} routes, ${handMadeCount} hand-made + ${answers.length - handMadeCount} random requests in ${((Date.now() - started) / 1000).toFixed(1)} s; ` +
        `statuses ${[...statuses].sort(([a], [b]) => a - b).map(([s, n]) => `${s}×${n}`).join(' ')}`,
    );

    const serverErrors = answers.filter((a) => a.status >= 500);
    expect(serverErrors.slice(0, 5), `${serverErrors.length} answers of 5xx`).toEqual([]);
    const unregistered = answers.filter((a) => {
      // A HEAD answer has no body to name its code.
      if (a.status < 400 || a.sent.method === 'HEAD') return false;
      const entry = a.code === undefined ? undefined : ERROR_CODES[a.code as keyof typeof ERROR_CODES];
      return entry?.status !== a.status;
    });
    expect(unregistered.slice(0, 5), `${unregistered.length} errors without a registered code and status`).toEqual([]);
    const undocumented = answers.filter((a) => !documents.answers(a.sent.route, a.status, a.code));
    expect([...new Set(undocumented.map((a) => `${a.sent.route} ${a.status} ${a.code}`))], `${undocumented.length} answers their route's OpenAPI document does not name`).toEqual([]);
    expect(api.logs.filter((line) => (line.level as number) >= 50).slice(0, 3)).toEqual([]);

    // Nothing invalid was stored, and nothing was turned into U+FFFD on the way.
    const stored = await query<{ n: string }>(
      api.pool,
      `SELECT (SELECT count(*) FROM api_keys WHERE name LIKE '%' || chr(65533) || '%')
            + (SELECT count(*) FROM warehouses WHERE (name || rest_uri || warehouse) LIKE '%' || chr(65533) || '%')
            + (SELECT count(*) FROM audit_events WHERE details::text LIKE '%' || chr(65533) || '%') AS n`,
    );
    expect(Number(stored[0]!.n)).toBe(0);
  }, 300_000);

  it('answers malformed HTTP on a real socket in the same shape, with registered codes', async () => {
    await publicApp.listen({ host: '127.0.0.1', port: 0 });
    const port = (publicApp.server.address() as net.AddressInfo).port;
    const raw = (bytes: Buffer) =>
      new Promise<string>((resolve) => {
        const socket = net.connect(port, '127.0.0.1');
        let answer = '';
        socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
        socket.on('close', () => resolve(answer));
        socket.on('error', () => undefined);
        socket.on('connect', () => socket.end(bytes));
        setTimeout(() => socket.destroy(), 5_000);
      });
    const garbage = Array.from({ length: 20 }, () => Buffer.from(Array.from({ length: 1 + Math.floor(random() * 300) }, () => Math.floor(random() * 256))));
    const requests = [
      'GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n',
      'NOTAMETHOD /healthz HTTP/1.1\r\nHost: x\r\n\r\n',
      'GET /healthz HTTP/9.9\r\nHost: x\r\n\r\n',
      'GET /v1/keys HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer a\u0000b\r\n\r\n',
      'POST /v1/keys HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n{}',
      'POST /v1/keys HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n',
      'POST /v1/keys HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
      `GET /${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`,
      `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
      'GET /v1/keys HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \u00ff\u00fe\r\n\r\n',
      `POST /v1/sinks/${sink.id} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${sink.send_key}\r\nIdempotency-Key: raw-1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n[{"x": 1`,
      '\r\n\r\n',
    ].map((text) => Buffer.from(text, 'latin1'));
    const results: Array<{ status: number; code: string | undefined; head: string }> = [];
    for (const bytes of [...requests, ...garbage]) {
      const answer = await raw(bytes);
      // Nothing at all is an answer too: a client that ends its side mid-request is just gone.
      if (answer === '') continue;
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1]);
      const body = answer.slice(answer.indexOf('\r\n\r\n') + 4);
      let code: string | undefined;
      try {
        code = ErrorBody.parse(JSON.parse(body)).error.code;
      } catch {
        code = undefined;
      }
      results.push({ status, code, head: answer.slice(0, 80) });
    }
    expect(results.length).toBeGreaterThan(10);
    expect(results.filter((r) => !(r.status < 500))).toEqual([]);
    const errors = results.filter((r) => r.status >= 400);
    expect(errors.filter((r) => ERROR_CODES[r.code as keyof typeof ERROR_CODES]?.status !== r.status)).toEqual([]);
    expect(errors.map((r) => r.code)).toEqual(expect.arrayContaining(['invalid_request', 'headers_too_large']));
    expect(api.logs.filter((line) => (line.level as number) >= 50)).toEqual([]);
  });
});
