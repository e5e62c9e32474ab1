import { describe, expect, it } from 'vitest';
import { parseDuration, sinceInstant } from './durations.ts';
import { CliError } from './errors.ts';

describe('parseDuration', () => {
  it('reads units and sums combinations', () => {
    expect(parseDuration('90s')).toBe(90);
    expect(parseDuration('15m')).toBe(900);
    expect(parseDuration('2h')).toBe(7_200);
    expect(parseDuration('7d')).toBe(604_800);
    expect(parseDuration('1w')).toBe(604_800);
    expect(parseDuration('1h30m')).toBe(5_400);
    expect(parseDuration(' 2H ')).toBe(7_200);
  });

  it('refuses numbers without a unit, unknown units, zero and junk', () => {
    for (const bad of ['30', '5y', '0m', '', 'h', '1.5h', '-2h', '2h 30m']) {
      expect(() => parseDuration(bad), bad).toThrow(CliError);
    }
    expect(() => parseDuration('30')).toThrow("duration '30': write a number and a unit (s, m, h, d, w), e.g. 90s, 15m, 2h, 7d or 1h30m");
  });
});

describe('sinceInstant', () => {
  const now = new Date('2026-09-21T12:00:00.000Z');
  it('goes back from now by a duration', () => {
    expect(sinceInstant('90m', now)).toBe('2026-09-21T10:30:00.000Z');
  });

  it('takes an RFC 3339 time with a zone, in UTC', () => {
    expect(sinceInstant('2026-09-21T14:00:00+02:00', now)).toBe('2026-09-21T12:00:00.000Z');
    expect(() => sinceInstant('2026-09-21T14:00:00', now)).toThrow(/needs a date, a time and a zone/);
  });
});
