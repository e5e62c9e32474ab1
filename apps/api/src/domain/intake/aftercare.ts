import { isDatabaseUnavailable } from '@tablemere/db';
import type { FastifyBaseLogger } from 'fastify';

/** How often the ledger writes left over by an outage are tried again. */
const RETRY_MS = 1_000;
/** Past this many, further ones are left to the stale-claim takeover (a replay after 120 s). */
const MOST_KEPT = 100_000;

interface Task {
  what: string;
  run: () => Promise<unknown>;
}

/**
 * Ledger writes a send could not finish because Postgres was away, done as soon as it is back
 * (issue 35). A send that stored its segment but could not settle it, or whose claim may have been
 * committed though its segment was never written, leaves a `storing` row: a retry of the batch would
 * get 409 batch_in_progress until the claim is stale (120 s). This process knows what became of
 * its own claims, so it settles or releases them itself, a second after the database answers
 * again, and the producer's retry is a replay (200) or a new claim. Lost with the process: then the
 * stale-claim takeover still settles every batch where it landed.
 */
export class Aftercare {
  private readonly tasks: Task[] = [];
  private timer: NodeJS.Timeout | undefined;
  private running = false;

  constructor(private readonly log: FastifyBaseLogger) {}

  /** Keeps `run` to try again until the database takes it. */
  later(what: string, run: () => Promise<unknown>): void {
    if (this.tasks.length >= MOST_KEPT) {
      this.log.warn({ what }, 'too many ledger writes waiting for the database; this one is left to the stale-claim takeover');
      return;
    }
    this.tasks.push({ what, run });
    this.timer ??= setInterval(() => void this.drain(), RETRY_MS).unref();
  }

  private async drain(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      while (this.tasks.length > 0) {
        const task = this.tasks[0]!;
        try {
          await task.run();
        } catch (error) {
          // Still away: everything waits for the next round, in order.
          if (unavailable(error)) return;
          this.log.warn({ err: error, what: task.what }, 'a ledger write left over by an outage failed; the stale-claim takeover will settle its batch');
        }
        this.tasks.shift();
      }
      clearInterval(this.timer);
      this.timer = undefined;
    } finally {
      this.running = false;
    }
  }

  close(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}

/** The database was unavailable (the send path wraps that in intake_unavailable): worth trying again. */
export function unavailable(error: unknown): boolean {
  return isDatabaseUnavailable(error) || isDatabaseUnavailable((error as { cause?: unknown } | undefined)?.cause);
}
