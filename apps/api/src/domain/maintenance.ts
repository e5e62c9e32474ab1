import type { Pool } from '@tablemere/db';
import { query, queryOne } from '@tablemere/db';
import type { FastifyBaseLogger } from 'fastify';
import { pruneLedger } from './intake/ledger-days.ts';
import { sweepStorage } from './meter.ts';
import { pruneRolls } from './rolls/intents.ts';
import { pruneUpkeeps } from './rolls/upkeep-report.ts';
import type { SecretBox } from './secrets.ts';
import { retireEndedKeys } from './sinks/rotation.ts';

export interface MaintenanceTask {
  name: string;
  /** What the run did, for the log line and maintenance_runs.details. */
  run(signal: AbortSignal): Promise<Record<string, unknown>>;
}

/**
 * The API's periodic work: measure every warehouse, prune the ledger, old rolls and old upkeep
 * runs, retire the send keys whose rotation overlap ended (they already answer 401; this
 * clears their digests and records sink.key_retired).
 */
export function maintenanceTasks(pool: Pool, secrets: SecretBox, log: FastifyBaseLogger): MaintenanceTask[] {
  return [
    { name: 'storage_sweep', run: async (signal) => ({ ...(await sweepStorage(pool, secrets, log, signal)) }) },
    { name: 'ledger_prune', run: async () => ({ ...(await pruneLedger(pool)), rolls: await pruneRolls(pool), upkeeps: await pruneUpkeeps(pool) }) },
    { name: 'send_key_retire', run: async () => ({ keys: await retireEndedKeys(pool) }) },
  ];
}

export interface MaintenanceOptions {
  pool: Pool;
  logger: FastifyBaseLogger;
  tasks: MaintenanceTask[];
  /** Each task runs at most once per interval across every API process. */
  intervalSeconds: number;
  /** How often the loop looks for due tasks; default the interval, at most a minute. */
  tickMs?: number;
}

/**
 * Runs the maintenance tasks from inside the API process. A task runs only when this process
 * claims it in maintenance_runs (once per interval, whichever process gets there first), so
 * several API processes share the work instead of repeating it, and a restart does not
 * re-run what ran recently.
 */
export class Maintenance {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<string[]> | undefined;
  private readonly abort = new AbortController();

  constructor(private readonly options: MaintenanceOptions) {}

  start(): void {
    const tickMs = this.options.tickMs ?? Math.min(this.options.intervalSeconds * 1000, 60_000);
    const tick = () => {
      this.running ??= this.runDue().finally(() => (this.running = undefined));
    };
    // The first pass waits one tick, so start-up is not slowed by a bucket listing.
    this.timer = setInterval(tick, tickMs);
    this.timer.unref();
  }

  /** Stops the loop, aborts a run in progress and waits for it to end. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.abort.abort();
    await this.running;
  }

  /** Claims and runs every due task once; returns the names of those this call ran. */
  async runDue(): Promise<string[]> {
    const ran: string[] = [];
    for (const task of this.options.tasks) {
      if (this.abort.signal.aborted) break;
      if (!(await this.claim(task.name))) continue;
      ran.push(task.name);
      await this.runTask(task);
    }
    return ran;
  }

  private async claim(task: string): Promise<boolean> {
    try {
      const row = await queryOne(
        this.options.pool,
        `INSERT INTO maintenance_runs (task, started_at) VALUES ($1, now())
         ON CONFLICT (task) DO UPDATE SET started_at = now(), finished_at = NULL, ok = NULL, details = '{}'::jsonb
           WHERE maintenance_runs.started_at <= now() - make_interval(secs => $2)
         RETURNING task`,
        [task, this.options.intervalSeconds],
      );
      return row !== undefined;
    } catch (error) {
      this.options.logger.warn({ task, err: error }, 'maintenance claim failed');
      return false;
    }
  }

  private async runTask(task: MaintenanceTask): Promise<void> {
    const log = this.options.logger;
    const started = performance.now();
    let ok = true;
    let details: Record<string, unknown>;
    try {
      details = await task.run(this.abort.signal);
      log.info({ task: task.name, duration_ms: Math.round(performance.now() - started), ...details }, 'maintenance task done');
    } catch (error) {
      ok = false;
      details = { error: error instanceof Error ? error.message : String(error) };
      log.error({ task: task.name, err: error }, 'maintenance task failed');
    }
    await query(this.options.pool, 'UPDATE maintenance_runs SET finished_at = now(), ok = $2, details = $3 WHERE task = $1', [
      task.name,
      ok,
      JSON.stringify(details),
    ]).catch((error: unknown) => log.warn({ task: task.name, err: error }, 'maintenance result not recorded'));
  }
}
