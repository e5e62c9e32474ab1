import { afterEach, describe, expect, it, vi } from 'vitest';
import { returnMemoryAfterBursts } from './memory-return.ts';

const MIB = 1024 * 1024;

describe('returnMemoryAfterBursts', () => {
  afterEach(() => vi.useRealTimers());

  it('collects while the RSS is past the margin over the lowest one read and the loop is not busy, and not otherwise', () => {
    vi.useFakeTimers();
    const readings = [200, 210, 260, 250, 220, 180, 230, 200].map((mib) => mib * MIB);
    let at = 0;
    const collectedAt: number[] = [];
    const collect = () => void collectedAt.push(at - 1);
    const busyAt = new Set([3]);
    const timer = returnMemoryAfterBursts(1_000, 32 * MIB, () => readings[at++]!, collect, () => busyAt.has(at - 1));
    vi.advanceTimersByTime(7_000);
    clearInterval(timer);
    // The floor is 200 MiB from the start, then 180: 260 and 250 are past 232 (250 while busy), 230 is past 212.
    expect(collectedAt).toEqual([2, 6]);
  });
});
