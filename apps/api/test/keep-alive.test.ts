import net from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKLOG_RETRY_AFTER } from '../src/domain/intake/drain.ts';
import { RETRY_AFTER_SECONDS } from '../src/errors.ts';
import { DEFAULT_SERVER_TIMEOUTS } from '../src/http/server-limits.ts';
import { startTestApi, type TestApi } from './support/harness.ts';
import { otherApp } from './support/sinks.ts';

/**
 * A producer told to come back after Retry-After seconds comes back on the connection it
 * has, kept alive by its HTTP client. Were the server's keep-alive shorter than the wait, the
 * server would be closing that connection just as the request went out on it, and the
 * client would see a reset instead of an answer (seen in bench:fanin as ECONNRESET).
 */

let api: TestApi;
let server: { app: FastifyInstance; close(): Promise<void> };
let port: number;

beforeAll(async () => {
  api = await startTestApi();
  // The listener's own defaults: no timeouts given.
  server = await otherApp(api, {});
  await server.app.listen({ host: '127.0.0.1', port: 0 });
  port = (server.app.server.address() as net.AddressInfo).port;
}, 60_000);

afterAll(async () => {
  await server?.close();
  await api?.close();
});

const REQUEST = 'GET /healthz HTTP/1.1\r\nHost: api.test\r\n\r\n';

/** Reads from `socket` until `count` whole answers to GET /healthz have come, or the socket ends. */
function answers(socket: net.Socket, count: number): Promise<string[]> {
  return new Promise((resolve) => {
    let text = '';
    const done = () => resolve(text.split('HTTP/1.1 ').slice(1).map((answer) => `HTTP/1.1 ${answer}`));
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      if (text.split('HTTP/1.1 ').length - 1 >= count && text.endsWith('}')) done();
    });
    socket.on('close', done);
    socket.on('error', done);
  });
}

describe('keep-alive between requests', () => {
  it('lasts longer than any Retry-After the API gives', () => {
    expect(DEFAULT_SERVER_TIMEOUTS.keepAliveMs).toBeGreaterThan(BACKLOG_RETRY_AFTER.max * 1000);
    expect(DEFAULT_SERVER_TIMEOUTS.keepAliveMs).toBeGreaterThan(RETRY_AFTER_SECONDS * 1000);
  });

  it(`serves a request sent on the same connection ${RETRY_AFTER_SECONDS + 2} s after the last answer`, async () => {
    const socket = net.connect(port, '127.0.0.1');
    try {
      const both = answers(socket, 2);
      socket.write(REQUEST);
      // Past the longest wait the API asks for besides backlog_full's, with room: the old 5 s keep-alive had closed by then.
      await new Promise((resolve) => setTimeout(resolve, (RETRY_AFTER_SECONDS + 2) * 1000));
      expect(socket.destroyed, 'the server closed the idle connection').toBe(false);
      socket.write(REQUEST);
      const [first, second] = await both;
      expect(first).toMatch(/^HTTP\/1\.1 200 /);
      expect(first?.toLowerCase()).toContain(`keep-alive: timeout=${DEFAULT_SERVER_TIMEOUTS.keepAliveMs / 1000}`);
      expect(second, 'no answer to the request sent after the wait').toMatch(/^HTTP\/1\.1 200 /);
    } finally {
      socket.destroy();
    }
  }, 30_000);
});
