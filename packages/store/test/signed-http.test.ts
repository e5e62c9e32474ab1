import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { stackEnv } from '../../../tests/support/stack.ts';
import { createS3Client, md5Hex, ObjectStore } from '../src/index.ts';
import { SignedHttp, signsPayload } from '../src/signed-http.ts';

const env = stackEnv();

describe('signsPayload', () => {
  it('hashes the payload into the signature only over plain HTTP to another machine', () => {
    expect(signsPayload(new URL('http://store.internal:8333'))).toBe(true);
    expect(signsPayload(new URL('http://10.0.0.7:9000'))).toBe(true);
    expect(signsPayload(new URL('https://s3.eu-west-1.amazonaws.com'))).toBe(false);
    expect(signsPayload(new URL('http://127.0.0.1:8333'))).toBe(false);
    expect(signsPayload(new URL('http://localhost:8333'))).toBe(false);
    expect(signsPayload(new URL('http://[::1]:8333'))).toBe(false);
  });
});

describe('SignedHttp on the stack', () => {
  const client = createS3Client({
    endpoint: env.AWS_ENDPOINT_URL!,
    region: env.AWS_REGION!,
    credentials: { accessKeyId: env.AWS_ACCESS_KEY_ID!, secretAccessKey: env.AWS_SECRET_ACCESS_KEY! },
  });
  const store = new ObjectStore(client, env.TABLEMERE_INTAKE_BUCKET!);
  const prefix = `signed-http-test/${randomBytes(4).toString('hex')}/`;

  afterAll(async () => {
    const keys: string[] = [];
    for await (const page of store.list(prefix)) keys.push(...page.objects.map((o) => o.key));
    await store.deleteMany(keys);
    client.destroy();
  });

  for (const signPayload of [true, false]) {
    it(`stores the bytes with the payload ${signPayload ? 'signed' : 'unsigned'}, and a wrong secret is refused either way`, async () => {
      const body = randomBytes(300_000);
      const key = `${prefix}${signPayload ? 'signed' : 'unsigned'}.bin`;
      const answer = await new SignedHttp(client, { signPayload }).put({
        bucket: store.bucket,
        key,
        body,
        contentType: 'application/octet-stream',
        metadata: { rows: '1' },
        ifAbsent: true,
      });
      expect(answer).toEqual({ ok: true, etag: md5Hex(body) });
      expect((await store.head(key)).metadata).toEqual({ rows: '1' });

      const wrong = createS3Client({
        endpoint: env.AWS_ENDPOINT_URL!,
        region: env.AWS_REGION!,
        credentials: { accessKeyId: env.AWS_ACCESS_KEY_ID!, secretAccessKey: `${env.AWS_SECRET_ACCESS_KEY!}x` },
      });
      const refused = await new SignedHttp(wrong, { signPayload }).put({
        bucket: store.bucket,
        key: `${key}.refused`,
        body,
        contentType: 'application/octet-stream',
        metadata: {},
        ifAbsent: true,
      });
      wrong.destroy();
      expect(refused).toMatchObject({ ok: false, status: 403 });
    });
  }
});

describe("SignedHttp's deadline", () => {
  it("is the client's requestTimeoutMs: a store that never answers is unavailable within it", async () => {
    const { createServer } = await import('node:http');
    const silent = createServer((request) => void request.resume());
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as { port: number };
    const client = createS3Client({ endpoint: `http://127.0.0.1:${port}`, region: 'us-east-1', credentials: { accessKeyId: 'a', secretAccessKey: 'b' }, requestTimeoutMs: 500 });
    try {
      const started = Date.now();
      const failure = await new ObjectStore(client, 'bucket').getBytes('some/key').catch((error: unknown) => error);
      const took = Date.now() - started;
      expect(failure).toMatchObject({ kind: 'unavailable' });
      expect(took).toBeGreaterThanOrEqual(450);
      expect(took).toBeLessThan(2_000);
    } finally {
      client.destroy();
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});
