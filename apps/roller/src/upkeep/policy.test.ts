import { describe, expect, it } from 'vitest';
import { upkeepDue } from './policy.ts';

const now = new Date('2026-12-01T12:00:00Z');
const sink = (lastRoll: string | null, lastUpkeep: string | null) => ({ last_roll_at: lastRoll, upkeep: { last_at: lastUpkeep, last_outcome: null } });

describe('upkeepDue', () => {
  it('is never due when upkeep is off or the sink never rolled', () => {
    expect(upkeepDue(sink('2026-12-01T11:00:00Z', null), now, 0)).toBe(false);
    expect(upkeepDue(sink(null, null), now, 3600)).toBe(false);
  });

  it('is due once a sink that was never upkept has rolled', () => {
    expect(upkeepDue(sink('2026-12-01T11:59:00Z', null), now, 3600)).toBe(true);
  });

  it('waits the interval after the last upkeep', () => {
    expect(upkeepDue(sink('2026-12-01T11:59:00Z', '2026-12-01T11:00:01Z'), now, 3600)).toBe(false);
    expect(upkeepDue(sink('2026-12-01T11:59:00Z', '2026-12-01T11:00:00Z'), now, 3600)).toBe(true);
  });

  it('skips a table nothing was appended to since its last upkeep', () => {
    expect(upkeepDue(sink('2026-12-01T09:00:00Z', '2026-12-01T10:00:00Z'), now, 3600)).toBe(false);
  });
});
