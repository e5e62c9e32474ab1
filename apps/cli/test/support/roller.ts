import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { repoRoot, stackEnv } from '../../../../tests/support/stack.ts';
import type { TestApi } from './api.ts';

const run = promisify(execFile);

/**
 * Rolls one sink now with the roller's operator command (`apps/roller/src/cli.ts roll`), as an
 * operator would, against the test API's internal listener; answers its JSON summary line.
 */
export async function rollOnce(api: TestApi, sinkId: string): Promise<Record<string, unknown>> {
  const stack = stackEnv();
  const { stdout } = await run(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'apps/roller/src/cli.ts'), 'roll', sinkId], {
    cwd: repoRoot,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      TABLEMERE_INTERNAL_URL: api.internalUrl,
      TABLEMERE_BOOTSTRAP_SECRET: api.bootstrapSecret,
      AWS_ENDPOINT_URL: stack.AWS_ENDPOINT_URL!,
      AWS_REGION: stack.AWS_REGION!,
      AWS_ACCESS_KEY_ID: stack.AWS_ACCESS_KEY_ID!,
      AWS_SECRET_ACCESS_KEY: stack.AWS_SECRET_ACCESS_KEY!,
      LOG_LEVEL: 'warn',
    },
    timeout: 180_000,
  });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
}
