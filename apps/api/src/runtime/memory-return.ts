import v8 from 'node:v8';
import vm from 'node:vm';
import { mallocTrim } from './malloc-trim.ts';

/**
 * Gives back what a burst of requests left behind. A flood of bodies leaves their buffers
 * as garbage outside the V8 heap; with that memory counted in the heap's global limit
 * (heap-tuning.ts) V8 runs no full collection while the process is idle or lightly loaded,
 * so RSS stayed where the flood took it (research/42). Every `everyMs` the RSS is read (one
 * system call); while it is more than `marginBytes` above the lowest RSS read (from the
 * start on) and the event loop was busy less than a quarter of the time, one full collection
 * runs, and no other until RSS grew that much again. So a process collects once after a burst
 * and then not at all, never while the burst lasts, and at most once per `everyMs` (a full
 * collection of the API's heap takes some tens of ms). It waits for the loop to be idle because
 * a collection during a stream of large sends costs each ~10 ms: the shrunk heap grows again
 * through more collections (research/42). The buffers it frees are then handed back to the
 * system (malloc-trim.ts).
 */
export function returnMemoryAfterBursts(
  everyMs = 10_000,
  marginBytes = 32 * 1024 * 1024,
  rss = process.memoryUsage.rss,
  collect = fullCollection(mallocTrim),
  busy = loopBusy(),
): NodeJS.Timeout {
  let floor = rss();
  // The first reading after the last collection: another only once RSS grew past it again, so a
  // process that stays above its floor (a working set) is not collected every `everyMs`: each
  // such collection shrinks the young generation, which the next requests grow again (research/42).
  let settled = -Infinity;
  let collected = false;
  return setInterval(() => {
    const now = rss();
    floor = Math.min(floor, now);
    if (collected) [settled, collected] = [now, false];
    // Not while the burst goes on: there the memory is in use, and V8 collects at its own pace.
    if (!busy() && now > floor + marginBytes && now > settled + marginBytes) {
      collect();
      collected = true;
    }
  }, everyMs).unref();
}

/** Whether the event loop was busy more than a quarter of the time since the last call. */
function loopBusy(): () => boolean {
  let last = performance.eventLoopUtilization();
  return () => {
    const now = performance.eventLoopUtilization();
    const busy = performance.eventLoopUtilization(now, last).utilization > 0.25;
    last = now;
    return busy;
  };
}

/**
 * A full collection that also gives the heap's emptied pages back ('last-resort': until nothing
 * more is freed), then, a second later, malloc's free pages (`release`): the buffers outside the
 * heap are freed by the collection and by V8's sweeper after it.
 */
function fullCollection(release: (() => void) | undefined): () => void {
  v8.setFlagsFromString('--expose-gc');
  // The flag applies to contexts made after it: a new one hands out the gc function.
  const gc = vm.runInNewContext('gc') as (options: object) => void;
  return () => {
    gc({ type: 'major', flavor: 'last-resort' });
    if (release) setTimeout(release, 1_000).unref();
  };
}
