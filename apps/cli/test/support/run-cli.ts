import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const cliBin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/tablemere.js');

/** A directory outside any checkout, so no `.stack/env` is found from it. */
export const outsideDir = (): string => mkdtempSync(path.join(tmpdir(), 'tablemere-cli-run-'));

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunCliOptions {
  /** The whole environment of the child (PATH and HOME are added). */
  env?: Record<string, string>;
  cwd?: string;
  /** Run this executable with these leading arguments instead of `node bin/tablemere.js`. */
  command?: readonly [string, ...string[]];
  /** Written to the child's standard input, which is then closed; no input when absent. */
  input?: string;
}

/** Runs the real binary as a user would and collects what it printed. */
export function runCli(args: readonly string[], options: RunCliOptions = {}): Promise<CliRun> {
  const [file, ...lead] = options.command ?? [process.execPath, cliBin];
  return new Promise((resolve, reject) => {
    const child = spawn(file, [...lead, ...args], {
      cwd: options.cwd ?? outsideDir(),
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...options.env },
      stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    child.stdin?.end(options.input);
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
