import type { RollContext } from './context.ts';

/** When each sink's rejects were last swept by this process: a sweep lists, so not every roll does it. */
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
 * Step 11, sweep: rejects files older than the retention (7 days by default) are deleted.
 * Best effort: a failure is logged and the next sweep tries again; it never fails a roll.
 * Returns how many files were deleted.
 */
export async function sweepRejects(ctx: RollContext): Promise<number> {
  const now = Date.now();
  const { sweeps, settings } = ctx.deps;
  if (!sweeps.due(ctx.sink.id, now)) return 0;
  const cutoff = now - settings.rejectsRetentionSeconds * 1000;
  try {
    const old: string[] = [];
    for await (const page of ctx.intake.list(ctx.sink.intake.rejects_prefix)) {
      for (const o of page.objects) if (o.lastModified !== undefined && o.lastModified.getTime() < cutoff) old.push(o.key);
    }
    const { failed } = await ctx.intake.deleteMany(old);
    if (failed.length > 0) ctx.log.warn({ failed: failed.length, first: failed[0]!.key }, 'some old rejects files could not be deleted');
    sweeps.done(ctx.sink.id, now);
    return old.length - failed.length;
  } catch (error) {
    ctx.log.warn({ err: error }, 'sweeping old rejects failed; trying again next roll');
    return 0;
  }
}
