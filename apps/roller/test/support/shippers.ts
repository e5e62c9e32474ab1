import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from '../../../../tests/support/stack.ts';
import { collect, type Finished } from './roller.ts';

/**
 * The binary tests/shippers/<name>/build.mjs builds: the one `npm test`'s install built, or built
 * now (a minute or two on a cold machine). Fails, never skips, when it cannot be built (no Go, no proxy).
 */
export async function shipperBinary(name: 'benthos' | 'telegraf'): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, [path.join(repoRoot, 'tests/shippers', name, 'build.mjs')], { cwd: repoRoot });
  return stdout.trim();
}

export interface ShipperRun {
  binary: string;
  args: string[];
  /** Written into a fresh directory, the shipper's working directory: its config and input. */
  files: Record<string, string>;
  env?: Record<string, string>;
  deadlineMs: number;
}

/** Runs a shipper to its end, killed and failed after `deadlineMs`. */
export async function runShipper({ binary, args, files, env, deadlineMs }: ShipperRun): Promise<Finished> {
  const dir = mkdtempSync(path.join(os.tmpdir(), `${path.basename(binary)}-`));
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  const child = spawn(binary, args, { cwd: dir, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const timer = setTimeout(() => child.kill('SIGKILL'), deadlineMs);
  try {
    const finished = await collect(child);
    if (finished.signal === 'SIGKILL') throw new Error(`${path.basename(binary)} did not finish in ${deadlineMs / 1000} s:\n${finished.stderr.slice(-4000)}`);
    return finished;
  } finally {
    clearTimeout(timer);
    rmSync(dir, { recursive: true, force: true });
  }
}
