import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';

export interface Managed {
  name: string;
  command: string;
  logFile: string;
  child: ChildProcess;
  /** Set once the process has exited, with its code or signal. */
  exited: string | undefined;
  stop(graceMs?: number): Promise<void>;
}

/** Starts a long-running process with stdout and stderr appended to its own log file. */
export function startProcess(opts: {
  name: string;
  cmd: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  logFile: string;
}): Managed {
  const fd = openSync(opts.logFile, 'a');
  const child = spawn(opts.cmd, opts.args, {
    cwd: opts.cwd,
    env: opts.env ?? process.env,
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  const managed: Managed = {
    name: opts.name,
    command: [opts.cmd, ...opts.args].join(' '),
    logFile: opts.logFile,
    child,
    exited: undefined,
    stop: (graceMs = 10_000) => stopChild(child, graceMs),
  };
  child.on('exit', (code, signal) => {
    managed.exited = signal ?? `exit ${code}`;
  });
  child.on('error', (err) => {
    managed.exited = `failed to start: ${err.message}`;
  });
  return managed;
}

/** SIGTERM, then SIGKILL after the grace period. */
export function stopChild(child: ChildProcess, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

export function tailFile(file: string, lines = 20): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log written)';
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
