import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { stackEnv } from '../../../tests/support/stack.ts';
import { createS3Client, ObjectStore } from '../src/index.ts';

describe('createS3Client', () => {
  // Services pass credentials from a deep-frozen config; the SDK writes onto the object it is
  // given, which once made every request fail with a TypeError.
  it('works with frozen credentials', async () => {
    const env = stackEnv();
    const credentials = Object.freeze({ accessKeyId: env.AWS_ACCESS_KEY_ID!, secretAccessKey: env.AWS_SECRET_ACCESS_KEY! });
    const client = createS3Client({ endpoint: env.AWS_ENDPOINT_URL!, region: env.AWS_REGION!, credentials });
    const store = new ObjectStore(client, env.TABLEMERE_INTAKE_BUCKET!);
    const key = `client-test/${randomBytes(6).toString('hex')}.txt`;
    await store.put(key, Buffer.from('frozen'), { contentType: 'text/plain' });
    expect((await store.head(key)).size).toBe(6);
    await store.deleteMany([key]);
    client.destroy();
  });
});
