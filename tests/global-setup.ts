/**
 * Integration tests run against the real local stack: reuse the one `npm start` runs (or any stack
 * described by a live `.stack/env`), otherwise start one for this run and stop it afterwards.
 * A stack that cannot start fails the run loudly.
 */
import { existsSync } from 'node:fs';
import { startStack, stackPaths } from '../scripts/stack/index.ts';
import { repoRoot, stackEnv } from './support/stack.ts';

async function liveStackEnv(envFile: string): Promise<boolean> {
  if (!existsSync(envFile)) return false;
  const endpoint = stackEnv().AWS_ENDPOINT_URL;
  if (!endpoint) return false;
  try {
    const res = await fetch(`${endpoint}/healthz`, { signal: AbortSignal.timeout(2000) });
    return res.ok;
  } catch {
    return false;
  }
}

export default async function setup(): Promise<(() => Promise<void>) | undefined> {
  const paths = stackPaths(repoRoot, process.env.TABLEMERE_STACK_DIR);
  if (await liveStackEnv(paths.envFile)) {
    console.log('[stack] using the running local stack');
    return undefined;
  }
  const stack = await startStack({
    root: repoRoot,
    dir: process.env.TABLEMERE_STACK_DIR,
    portOffset: Number(process.env.TABLEMERE_STACK_PORT_OFFSET ?? 0),
    databaseUrl: process.env.DATABASE_URL,
    say: (line) => console.log(`[stack] ${line}`),
  });
  console.log(`[stack] ready in ${stack.timings.total} ms ${JSON.stringify(stack.timings)}`);
  return () => stack.stop();
}
