import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { repoRoot } from '../../../../tests/support/stack.ts';

const cli = path.join(repoRoot, 'apps/roller/bin/roller.js');
const service = path.join(repoRoot, 'apps/roller/src/main.ts');

export interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export function collect(child: ChildProcess): Promise<Finished> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** Runs the operator command (`bin/roller.js roll ...`, as documented) to its end. */
export function runCli(args: string[], env: Record<string, string>): Promise<Finished> {
  return collect(spawn(process.execPath, [cli, ...args], { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] }));
}

/** The summaries the operator command printed, one JSON line per sink. */
export function summaries(run: Finished): Array<Record<string, unknown>> {
  return run.stdout
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

export interface RunningRoller {
  child: ChildProcess;
  /** Everything it wrote so far. */
  output(): string;
  finished: Promise<Finished>;
}

/** Starts the roller service as its own process. */
export function startRoller(env: Record<string, string>): RunningRoller {
  const child = spawn(process.execPath, ['--import', 'tsx', service], { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  child.stdout!.on('data', (chunk: Buffer) => (text += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (text += chunk.toString()));
  const finished = collect(child).then((f) => ({ ...f, stdout: text }));
  return { child, output: () => text, finished };
}

/** The roller's log lines, parsed. */
export function logLines(text: string): Array<Record<string, unknown>> {
  return text
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

export async function waitFor(what: string, check: () => Promise<boolean>, deadlineMs = 60_000): Promise<void> {
  const end = Date.now() + deadlineMs;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** The service's address, from its start-up line. */
export async function addressOf(roller: RunningRoller): Promise<string> {
  let address: string | undefined;
  await waitFor('the start-up line', async () => {
    address = logLines(roller.output()).find((l) => typeof l.address === 'string' && typeof l.internal_api === 'string')?.address as string | undefined;
    return address !== undefined;
  });
  return address!;
}
