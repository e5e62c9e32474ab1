import { describe, expect, it } from 'vitest';
import { ago, count, plural, size, span, when } from './human.ts';

describe('human formatting', () => {
  const now = new Date('2026-09-21T12:00:00Z');
  const before = (seconds: number) => new Date(now.getTime() - seconds * 1000).toISOString();

  it('says ages in one unit', () => {
    expect(ago(before(0.2), now)).toBe('just now');
    expect(ago(before(-30), now)).toBe('just now');
    expect(ago(before(42), now)).toBe('42 s ago');
    expect(ago(before(200), now)).toBe('3 min ago');
    expect(ago(before(3 * 3600 + 59 * 60), now)).toBe('3 h ago');
    expect(ago(before(2 * 86400 + 3600), now)).toBe('2 d ago');
  });

  it('says spans in up to two units', () => {
    expect(span(42)).toBe('42 s');
    expect(span(300)).toBe('5 min');
    expect(span(312)).toBe('5 min 12 s');
    expect(span(7_500)).toBe('2 h 5 min');
    expect(span(86_400 * 3 + 3600 * 4)).toBe('3 d 4 h');
  });

  it('says sizes in binary units', () => {
    expect(size(512)).toBe('512 B');
    expect(size(3_482)).toBe('3.4 KiB');
    expect(size(16 * 1024 * 1024)).toBe('16.0 MiB');
    expect(size(40 * 1024 * 1024 + 1)).toBe('40.0 MiB');
    expect(size(1.25 * 1024 ** 3)).toBe('1.25 GiB');
  });

  it('counts with separators and the right noun', () => {
    expect(count(1_234_567)).toBe('1,234,567');
    expect(plural(1, 'batch', 'batches')).toBe('1 batch');
    expect(plural(250_000, 'row')).toBe('250,000 rows');
  });

  it('gives an instant with its age', () => {
    expect(when('2026-09-21T11:56:30.123Z', now)).toBe('2026-09-21 11:56:30Z (3 min ago)');
    expect(when('2026-09-22T11:59:00Z', now)).toBe('2026-09-22 11:59:00Z (in 23 h 59 min)');
  });
});
