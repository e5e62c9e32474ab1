import { rollsPrefix } from '@tablemere/store';
import type { RollContext } from './context.ts';

/** When each sink's intake was last swept by this process: a sweep lists, so not every roll does it. */
export class SweepSchedule {
  private readonly last = new Map<string, number>();

  constructor(private readonly intervalMs: number) {}

  due(sinkId: string, now: number): boolean {
    const last = this.last.get(sinkId);
    return last === undefined || now - last >= this.intervalMs;
  }

  done(sinkId: string, now: number): void {
    this.last.set(sinkId, now);
  }
}

/**
 * Step 11, sweep: rejects files and roll sidecars older than the retention (7 days by default)
 * are deleted. A sidecar is kept whatever its age while `keep` names it (the newest sink
 * snapshot's and the open intents'): only those can name a batch still in the intake, since
 * every other roll deleted its batches before its report. Best effort: a failure is logged and
 * the next sweep tries again; it never fails a roll. Returns how many files were deleted.
 */
export async function sweepIntake(ctx: RollContext, keep: ReadonlySet<string>): Promise<number> {
  const now = Date.now();
  const { sweeps, settings } = ctx.deps;
  if (!sweeps.due(ctx.sink.id, now)) return 0;
  const cutoff = now - settings.rejectsRetentionSeconds * 1000;
  try {
    const old: string[] = [];
    for (const prefix of [ctx.sink.intake.rejects_prefix, rollsPrefix(ctx.sink.id)]) {
      for await (const page of ctx.intake.list(prefix)) {
        for (const o of page.objects) if (o.lastModified !== undefined && o.lastModified.getTime() < cutoff && !keep.has(o.key)) old.push(o.key);
      }
    }
    const { failed } = await ctx.intake.deleteMany(old);
    if (failed.length > 0) ctx.log.warn({ failed: failed.length, first: failed[0]!.key }, 'some old rejects or roll files could not be deleted');
    sweeps.done(ctx.sink.id, now);
    return old.length - failed.length;
  } catch (error) {
    ctx.log.warn({ err: error }, 'sweeping old rejects and roll files failed; trying again next roll');
    return 0;
  }
}
