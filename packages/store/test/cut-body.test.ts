/**
 * A link that goes down while an object's body is on its way (issue 35: a store read cut mid-roll
 * was reported as `internal`, "aborted"). A TCP proxy in front of the stack's S3 forwards every
 * byte until it has passed `cutAfter` bytes of answers on a connection, then closes both sides.
 */
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stackEnv } from '../../../tests/support/stack.ts';
import { createS3Client, isStoreError, ObjectStore } from '../src/index.ts';

interface CuttingProxy {
  endpoint: string;
  /** Answer bytes passed on a connection before it is cut; Infinity forwards everything. */
  cutAfter: number;
  close(): Promise<void>;
}

async function startCuttingProxy(upstream: URL): Promise<CuttingProxy> {
  const sockets = new Set<net.Socket>();
  const proxy: CuttingProxy = { endpoint: '', cutAfter: Number.POSITIVE_INFINITY, close: async () => {} };
  const server = net.createServer((client) => {
    const store = net.connect(Number(upstream.port), upstream.hostname);
    for (const socket of [client, store]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    client.pipe(store);
    let passed = 0;
    store.on('data', (chunk: Buffer) => {
      const room = proxy.cutAfter - passed;
      passed += chunk.byteLength;
      if (room >= chunk.byteLength) return void client.write(chunk);
      if (room > 0) client.write(chunk.subarray(0, room));
      client.destroy();
      store.destroy();
    });
    store.on('end', () => client.end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.endpoint = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  proxy.close = async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return proxy;
}

describe('an object body cut off on its way', () => {
  const env = stackEnv();
  const credentials = { accessKeyId: env.AWS_ACCESS_KEY_ID!, secretAccessKey: env.AWS_SECRET_ACCESS_KEY! };
  const direct = new ObjectStore(createS3Client({ endpoint: env.AWS_ENDPOINT_URL!, region: env.AWS_REGION!, credentials }), env.TABLEMERE_INTAKE_BUCKET!);
  const key = `store-test/${randomBytes(4).toString('hex')}/cut.bin`;
  const body = randomBytes(256 * 1024);
  let proxy: CuttingProxy;
  let viaProxy: ObjectStore;

  beforeAll(async () => {
    await direct.put(key, body, { contentType: 'application/octet-stream' });
    proxy = await startCuttingProxy(new URL(env.AWS_ENDPOINT_URL!));
    viaProxy = new ObjectStore(createS3Client({ endpoint: proxy.endpoint, region: env.AWS_REGION!, credentials }), env.TABLEMERE_INTAKE_BUCKET!);
  });
  afterAll(async () => {
    await direct.deleteMany([key]);
    await proxy?.close();
  });

  it('reads whole through the proxy while nothing is cut', async () => {
    proxy.cutAfter = Number.POSITIVE_INFINITY;
    expect((await viaProxy.getBytes(key)).bytes.equals(body)).toBe(true);
  });

  it('is a StoreError `unavailable` when the link drops mid-body, not an unclassified error', async () => {
    proxy.cutAfter = 64 * 1024;
    const failure = await viaProxy.getBytes(key).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isStoreError(failure, 'unavailable'), String(failure)).toBe(true);
    expect((failure as Error).message).toContain('(body)');
  });
});
