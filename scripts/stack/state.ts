import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { isAlive } from './process.ts';

/** What a running stack leaves in `.stack/state.json`, so a second start can find it. */
export interface StackState {
  ownerPid: number;
  startedAt: string;
  apiUrl: string;
  pids: number[];
}

export function readState(file: string): StackState | undefined {
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as StackState;
  } catch {
    return undefined;
  }
}

export function writeState(file: string, state: StackState): void {
  writeFileSync(file, JSON.stringify(state, null, 2));
}

/** A stack whose owner died (kill -9, a closed terminal) leaves children behind: end them. */
export async function reapStale(file: string): Promise<void> {
  const state = readState(file);
  if (!state || isAlive(state.ownerPid)) return;
  for (const pid of state.pids) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
  const deadline = Date.now() + 10_000;
  while (state.pids.some(isAlive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  rmSync(file, { force: true });
}

/** The running stack's state when its owner is alive and its API answers. */
export async function runningStack(file: string): Promise<StackState | undefined> {
  const state = readState(file);
  if (!state || !isAlive(state.ownerPid)) return undefined;
  try {
    const res = await fetch(`${state.apiUrl}/healthz`, { signal: AbortSignal.timeout(2000) });
    return res.ok ? state : undefined;
  } catch {
    return undefined;
  }
}
