/**
 * A store that takes the connection and never answers (a frozen or partitioned store) holds a
 * send no longer than the store's request deadline (TABLEMERE_STORE_TIMEOUT_MS; issue 35): the
 * send answers 503 intake_unavailable with Retry-After, and the process serves on.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { createS3Client } from '@tablemere/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropNamespace, startTestApi, type TestApi } from './support/harness.ts';
import { createSink, createTable, otherApp, send } from './support/sinks.ts';

const DEADLINE_MS = 1_000;

describe('a send while the store does not answer', () => {
  let api: TestApi;
  let silent: Server;
  const sockets = new Set<Socket>();
  const namespace = `storewait_${process.pid}_${Date.now()}`;
  beforeAll(async () => {
    api = await startTestApi();
    silent = createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    silent?.close();
    if (!api) return;
    await dropNamespace(api.env, namespace);
    await api.close();
  });

  it('answers 503 intake_unavailable within the deadline', async () => {
    await createTable(api, namespace, 'events');
    const sink = await createSink(api.app, api.adminKey, { name: `${namespace}_in`, table: `${namespace}.events` });
    const endpoint = `http://127.0.0.1:${(silent.address() as { port: number }).port}`;
    const s3 = createS3Client({ endpoint, region: api.env.AWS_REGION!, requestTimeoutMs: DEADLINE_MS, credentials: { accessKeyId: 'k', secretAccessKey: 's' } });
    const frozen = await otherApp(api, { s3 });
    try {
      const started = Date.now();
      const answer = await send(frozen.app, sink, '[{"x": 1}]');
      const took = Date.now() - started;
      expect(answer.status, answer.text).toBe(503);
      expect(answer.body.error.code).toBe('intake_unavailable');
      expect(Number(answer.headers['retry-after'])).toBeGreaterThan(0);
      // The PUT's deadline, then a HEAD asking whether it landed anyway, each bounded.
      expect(took).toBeGreaterThanOrEqual(DEADLINE_MS);
      expect(took).toBeLessThan(3 * DEADLINE_MS + 1_000);
      expect(sockets.size).toBeGreaterThan(0);
    } finally {
      await frozen.close();
      s3.destroy();
    }
  });
});
