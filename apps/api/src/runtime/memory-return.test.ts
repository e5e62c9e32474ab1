import { afterEach, describe, expect, it, vi } from 'vitest';
import { returnMemoryAfterBursts } from './memory-return.ts';

const MIB = 1024 * 1024;

describe('returnMemoryAfterBursts', () => {
  afterEach(() => vi.useRealTimers());

  it('collects while the RSS is past the margin over the lowest one read, the loop is not busy, and RSS grew again since the last collection', () => {
    vi.useFakeTimers();
    const readings = [200, 210, 260, 250, 250, 290, 290, 200].map((mib) => mib * MIB);
    let at = 0;
    const collectedAt: number[] = [];
    const collect = () => void collectedAt.push(at - 1);
    const busyAt = new Set([5]);
    const timer = returnMemoryAfterBursts(1_000, 32 * MIB, () => readings[at++]!, collect, () => busyAt.has(at - 1));
    vi.advanceTimersByTime(7_000);
    clearInterval(timer);
    // The floor is 200 MiB: 260 is past 232; 250 stays past it but not past 250 + 32 (the reading
    // after that collection); 290 is, first while busy, then not.
    expect(collectedAt).toEqual([2, 6]);
  });
});
