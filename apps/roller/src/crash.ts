/**
 * A test-only fault hook: with TABLEMERE_ROLLER_CRASH_AT=<point> the process SIGKILLs itself
 * the first time a roll (or an upkeep run) reaches that point, so tests can prove a roll is safe to die anywhere.
 * Unset, every check is one comparison with undefined.
 */
export const ROLL_CRASH_POINTS = [
  /** Rejects files written, nothing else. */
  'after-rejects',
  /** The Parquet data file written, no intent recorded. */
  'after-write',
  /** The roll intent recorded, not committed. */
  'after-intent',
  /** The snapshot committed, no batch deleted. */
  'after-commit',
  /** Half of the consumed batches deleted. */
  'mid-delete',
  /** Every consumed batch deleted, the report not sent. */
  'before-report',
  /** The report sent, the lease not released. */
  'after-report',
] as const;

/**
 * Steps only a roll of more than 1,000 batches takes (apps/roller/test/sidecar.test.ts kills
 * one at each); a smaller roll never reaches them.
 */
export const SIDECAR_CRASH_POINTS = [
  /** The sidecar of batch ids written, no intent recorded. */
  'after-sidecar',
] as const;

/** A roll of a sink adding columns for new fields (apps/roller/test/add-columns.test.ts kills one there). */
export const ADD_COLUMNS_CRASH_POINTS = [
  /** The new columns committed to the table's schema, nothing written for the append. */
  'after-schema-commit',
] as const;

export const UPKEEP_CRASH_POINTS = [
  /** Upkeep: the compacted data files written, the replace snapshot not committed. */
  'upkeep-before-compact-commit',
  /** Upkeep: the replace snapshot committed, nothing expired. */
  'upkeep-after-compact-commit',
  /** Upkeep: the expiry planned, not committed. */
  'upkeep-before-expire-commit',
  /** Upkeep: snapshots expired and their files deleted, the run not reported. */
  'upkeep-before-report',
] as const;

export const CRASH_POINTS = [...ROLL_CRASH_POINTS, ...SIDECAR_CRASH_POINTS, ...ADD_COLUMNS_CRASH_POINTS, ...UPKEEP_CRASH_POINTS] as const;

export type CrashPoint = (typeof CRASH_POINTS)[number];

export class CrashHook {
  constructor(private readonly at: CrashPoint | undefined) {}

  /** True when the hook will fire at `point`: lets a step split its work to make the point reachable. */
  armed(point: CrashPoint): boolean {
    return this.at === point;
  }

  reached(point: CrashPoint): void {
    if (this.at === point) process.kill(process.pid, 'SIGKILL');
  }
}
