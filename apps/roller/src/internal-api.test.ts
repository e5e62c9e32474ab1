import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { InternalApi, InternalApiError } from './internal-api.ts';

/** A local server answering every request with `answer` (or never, when it returns undefined). */
async function serve(answer: (n: number) => { status: number; body: string } | undefined): Promise<{ server: Server; url: string; requests: () => number }> {
  let n = 0;
  const server = createServer((request, response) => {
    const reply = answer(++n);
    request.resume();
    if (reply) response.writeHead(reply.status, { 'content-type': 'application/json' }).end(reply.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests: () => n };
}

const unavailable = { status: 503, body: '{"error":{"code":"database_unavailable","message":"later"}}' };
const list = { status: 200, body: JSON.stringify({ enabled: true, as_of: new Date().toISOString(), sinks: [] }) };

describe('InternalApi bounds', () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    server = undefined;
  });

  it('fails an API that never answers as unavailable within its bound, not retrying past it', async () => {
    const silent = await serve(() => undefined);
    server = silent.server;
    const api = new InternalApi({ url: silent.url, secret: 's', timeoutMs: 600 });
    const started = Date.now();
    const error = await api.listSinks().catch((e: unknown) => e);
    const took = Date.now() - started;
    expect(error).toBeInstanceOf(InternalApiError);
    expect((error as InternalApiError).kind).toBe('unavailable');
    expect(took).toBeGreaterThanOrEqual(550);
    expect(took).toBeLessThan(1_200);
    expect(silent.requests()).toBe(1);
  });

  it('retries quick 5xx answers within the bound', async () => {
    const flaky = await serve((n) => (n < 3 ? unavailable : list));
    server = flaky.server;
    const api = new InternalApi({ url: flaky.url, secret: 's', timeoutMs: 5_000 });
    await expect(api.listSinks()).resolves.toMatchObject({ enabled: true });
    expect(flaky.requests()).toBe(3);
  });

  it('does not start a retry without time left in the bound', async () => {
    const down = await serve(() => unavailable);
    server = down.server;
    // 250 ms pause + 500 ms for the attempt do not fit in 600 ms: one attempt only.
    const api = new InternalApi({ url: down.url, secret: 's', timeoutMs: 600 });
    await expect(api.listSinks()).rejects.toMatchObject({ kind: 'unavailable', status: 503 });
    expect(down.requests()).toBe(1);
  });
});
