import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { repoRoot } from '../../../../tests/support/stack.ts';
import { collect, type Finished } from './roller.ts';

const build = path.join(repoRoot, 'tests/shippers/benthos/build.mjs');

/**
 * The Benthos binary of tests/shippers/benthos: the one `npm test`'s install built, or built now
 * (minutes on a cold machine). Fails, never skips, when it cannot be built (no Go, no proxy).
 */
export async function benthosBinary(): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, [build], { cwd: repoRoot });
  return stdout.trim();
}

/** Runs `benthos -c <config>` to its end, killed and failed after `deadlineMs`. */
export async function runBenthos(binary: string, config: Record<string, unknown>, deadlineMs: number): Promise<Finished> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'benthos-'));
  const file = path.join(dir, 'config.yaml');
  writeFileSync(file, stringify(config));
  const child = spawn(binary, ['-c', file], { stdio: ['ignore', 'pipe', 'pipe'] });
  const timer = setTimeout(() => child.kill('SIGKILL'), deadlineMs);
  try {
    const finished = await collect(child);
    if (finished.signal === 'SIGKILL') throw new Error(`Benthos did not finish in ${deadlineMs / 1000} s:\n${finished.stderr.slice(-4000)}`);
    return finished;
  } finally {
    clearTimeout(timer);
    rmSync(dir, { recursive: true, force: true });
  }
}
