import { tailFile, type Managed } from './process.ts';

/** The first restart waits this long; each quick death doubles it, up to MAX_DELAY_MS. */
const FIRST_DELAY_MS = 1_000;
const MAX_DELAY_MS = 30_000;
/** A process that stayed up this long was healthy: its next death starts the back-off over. */
const HEALTHY_AFTER_MS = 60_000;
const TAIL_LINES = 12;

/** Which process exited and why, with the last lines of its log. */
function exitReport(proc: Managed): string {
  const log = tailFile(proc.logFile, TAIL_LINES).replace(/^/gm, '    ');
  return `${proc.name} exited (${proc.exited ?? 'unknown'}); the last lines of ${proc.logFile}:\n${log}`;
}

/**
 * For a store the stack cannot restart on its own data (SeaweedFS, a JVM catalog): says that it
 * exited and why, unless `stopping()` says the stack is being stopped.
 */
export function reportExit(proc: Managed, say: (line: string) => void, stopping: () => boolean): void {
  proc.child.once('exit', () => {
    if (!stopping()) say(`${exitReport(proc)}\nthe stack cannot go on without it: stop it (Ctrl-C) and start it again`);
  });
}

export interface Supervised {
  /** The process running now (or the last one, while a restart waits). */
  current(): Managed;
  /** Stops the process and any restart still waiting. */
  stop(): Promise<void>;
}

export interface SuperviseOptions {
  say: (line: string) => void;
  /** Called with each new process, e.g. to record its pid. */
  onRestart?: (proc: Managed) => void;
}

/**
 * Keeps a service of the local stack running, as systemd's `Restart=always` would: when it exits
 * on its own, says which process and why, with the last lines of its log, and starts it again
 * after a back-off (1, 2, 4 … 30 s; from 1 s again after a minute up).
 */
export function supervise(first: Managed, start: () => Managed, options: SuperviseOptions): Supervised {
  let proc = first;
  let stopped = false;
  let delay = FIRST_DELAY_MS;
  let startedAt = Date.now();
  let timer: NodeJS.Timeout | undefined;

  const watch = (watched: Managed) => {
    watched.child.once('exit', () => {
      if (stopped) return;
      if (Date.now() - startedAt >= HEALTHY_AFTER_MS) delay = FIRST_DELAY_MS;
      options.say(exitReport(watched));
      options.say(`restarting ${watched.name} in ${delay / 1000} s`);
      timer = setTimeout(() => {
        timer = undefined;
        if (stopped) return;
        proc = start();
        startedAt = Date.now();
        options.say(`${proc.name} restarted (pid ${proc.child.pid})`);
        options.onRestart?.(proc);
        watch(proc);
      }, delay);
      delay = Math.min(delay * 2, MAX_DELAY_MS);
    });
  };
  watch(first);

  return {
    current: () => proc,
    async stop() {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      await proc.stop();
    },
  };
}
