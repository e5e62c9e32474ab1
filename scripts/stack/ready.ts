import { tailFile, type Managed } from './process.ts';

/** A component of the stack that did not start; the message is what a person needs to fix it. */
export class StackStartError extends Error {
  constructor(component: string, command: string, reason: string, logFile?: string) {
    const log = logFile ? `\n--- last lines of ${logFile} ---\n${tailFile(logFile)}` : '';
    super(`${component} did not start: ${reason}\ncommand: ${command}${log}`);
    this.name = 'StackStartError';
  }
}

/**
 * Polls `check` until it answers true or the deadline passes. Gives up at once when the process
 * behind it has exited, instead of waiting out the deadline.
 */
export async function waitUntilReady(
  component: string,
  check: () => Promise<boolean>,
  opts: { deadlineMs: number; proc?: Managed; command?: string; logFile?: string },
): Promise<number> {
  const started = Date.now();
  const command = opts.proc?.command ?? opts.command ?? '(in process)';
  const logFile = opts.proc?.logFile ?? opts.logFile;
  let lastError = 'not ready';
  while (Date.now() - started < opts.deadlineMs) {
    if (opts.proc?.exited) throw new StackStartError(component, command, `process ended (${opts.proc.exited})`, logFile);
    try {
      if (await check()) return Date.now() - started;
    } catch (err) {
      lastError = err instanceof Error ? err.message : String(err);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new StackStartError(component, command, `not ready after ${opts.deadlineMs} ms (${lastError})`, logFile);
}

/** True when `url` answers with the expected status. */
export async function httpStatusIs(url: string, status = 200): Promise<boolean> {
  const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
  await res.arrayBuffer();
  return res.status === status;
}
