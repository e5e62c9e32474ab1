import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { freePort } from '../../../tests/support/ports.ts';
import { ApiClient } from './api-client.ts';
import { CliError } from './errors.ts';

// A plain HTTP server answering fixed shapes, for the answers the real API rarely gives
// (a proxy's HTML 502, a 503 with Retry-After, silence); the real API is exercised end to end
// in test/cli.test.ts.
const answers: Record<string, (res: ServerResponse) => void> = {
  '/ok': (res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok","extra":1}'),
  '/shape': (res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":42}'),
  '/refused': (res) =>
    res.writeHead(409, { 'content-type': 'application/json' }).end('{"error":{"code":"table_exists","message":"pick another name"}}'),
  '/busy': (res) =>
    res
      .writeHead(503, { 'content-type': 'application/json', 'retry-after': '7' })
      .end('{"error":{"code":"catalog_unavailable","message":"the catalog is down"}}'),
  '/proxy': (res) => res.writeHead(502, { 'content-type': 'text/html' }).end('<html>bad gateway</html>'),
  '/silent': () => {},
};

let server: Server;
let baseUrl: string;
const seen: { authorization?: string; url?: string }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push({ authorization: req.headers.authorization, url: req.url });
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    (answers[path] ?? ((r) => r.writeHead(404).end()))(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const Status = z.object({ status: z.string() });

async function failure(promise: Promise<unknown>): Promise<CliError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CliError);
  return error as CliError;
}

describe('ApiClient', () => {
  const client = () => new ApiClient({ apiUrl: baseUrl, apiKey: 'k1' }, 300);

  it('sends the bearer key and query, parses with the schema, keeps the body as sent', async () => {
    const answer = await client().get('/ok', Status, { namespace: 'a b', unset: undefined });
    expect(answer.value).toEqual({ status: 'ok' });
    expect(answer.body).toEqual({ status: 'ok', extra: 1 });
    expect(seen.at(-1)).toEqual({ authorization: 'Bearer k1', url: '/ok?namespace=a+b' });
  });

  it('maps answers to error kinds', async () => {
    const refused = await failure(client().get('/refused', Status));
    expect([refused.kind, refused.message]).toEqual(['refused', 'table_exists: pick another name']);

    const busy = await failure(client().get('/busy', Status));
    expect([busy.kind, busy.message]).toEqual(['unavailable', 'catalog_unavailable: the catalog is down (retry after 7 s)']);

    const proxy = await failure(client().get('/proxy', Status));
    expect([proxy.kind, proxy.message]).toEqual(['unavailable', 'http_502: GET /proxy answered 502 Bad Gateway']);

    const shape = await failure(client().get('/shape', Status));
    expect(shape.kind).toBe('unavailable');
    expect(shape.message).toMatch(/^unexpected_response: GET \/shape answered a body tablemere cannot read \(status: /);
  });

  it('reports silence and closed ports as unavailable', async () => {
    const silent = await failure(client().get('/silent', Status));
    expect([silent.kind, silent.message]).toEqual(['unavailable', `the API at ${baseUrl} did not answer within 0.3 s`]);

    const nobody = `http://127.0.0.1:${await freePort()}`;
    const closed = await failure(new ApiClient({ apiUrl: nobody, apiKey: 'k' }).get('/ok', Status));
    expect([closed.kind, closed.message]).toEqual(['unavailable', `cannot reach the API at ${nobody} (ECONNREFUSED)`]);
  });
});
