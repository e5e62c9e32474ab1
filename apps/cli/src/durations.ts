import { usageError } from './errors.ts';

const unitSeconds: Readonly<Record<string, number>> = { s: 1, m: 60, h: 3_600, d: 86_400, w: 604_800 };

/**
 * Reads a duration such as `90s`, `15m`, `2h`, `7d`, `1w` or `1h30m` as whole seconds. A
 * bare number is refused: `--since 30` could mean seconds or minutes, so the unit is required.
 */
export function parseDuration(text: string): number {
  const trimmed = text.trim().toLowerCase();
  if (!/^(\d+[smhdw])+$/.test(trimmed)) {
    throw usageError(`duration '${text}': write a number and a unit (s, m, h, d, w), e.g. 90s, 15m, 2h, 7d or 1h30m`);
  }
  let seconds = 0;
  for (const [, count, unit] of trimmed.matchAll(/(\d+)([smhdw])/g)) seconds += Number(count) * unitSeconds[unit!]!;
  if (!Number.isSafeInteger(seconds) || seconds === 0) throw usageError(`duration '${text}': must be more than zero and finite`);
  return seconds;
}

/**
 * The instant `--since` names: either a duration back from `now` (`2h`) or an RFC 3339
 * timestamp with a zone (`2026-09-21T12:00:00Z`), answered as RFC 3339 in UTC.
 */
export function sinceInstant(text: string, now: Date): string {
  if (/^\d{4}-\d{2}-\d{2}T/.test(text.trim())) {
    const at = new Date(text.trim());
    if (!/(Z|[+-]\d{2}:\d{2})$/i.test(text.trim()) || Number.isNaN(at.getTime())) {
      throw usageError(`--since '${text}': a timestamp needs a date, a time and a zone, e.g. 2026-09-21T12:00:00Z`);
    }
    return at.toISOString();
  }
  return new Date(now.getTime() - parseDuration(text) * 1000).toISOString();
}
