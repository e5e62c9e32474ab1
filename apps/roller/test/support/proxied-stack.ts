import { startFaultyProxy, type FaultyProxy } from '../../../../packages/iceberg/test/faulty-proxy.ts';
import { startTestStack, type TestStack } from './stack.ts';

/**
 * A test stack whose API and rollers reach the catalog of `env` through a proxy that forwards
 * everything and can run a hook (another writer's commit) right before the next table commit.
 */
export async function startProxiedStack(env: Record<string, string>): Promise<{ stack: TestStack; proxy: FaultyProxy }> {
  const catalog = new URL(env.ICEBERG_REST_URI!);
  const proxy = await startFaultyProxy(catalog.origin, { dropAnswers: 0, forward: true });
  const stack = await startTestStack({ env: { ...env, ICEBERG_REST_URI: `${proxy.uri}${catalog.pathname.replace(/\/$/, '')}` } });
  return { stack, proxy };
}
