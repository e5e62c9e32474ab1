/** Ages, sizes and counts as a person reads them at a glance. */

const KIB = 1024;
const MIB = 1024 * KIB;
const GIB = 1024 * MIB;

/** `512 B`, `3.4 KiB`, `16.0 MiB`, `1.25 GiB`. */
export function size(bytes: number): string {
  if (bytes < KIB) return `${bytes} B`;
  if (bytes < MIB) return `${(bytes / KIB).toFixed(1)} KiB`;
  if (bytes < GIB) return `${(bytes / MIB).toFixed(1)} MiB`;
  return `${(bytes / GIB).toFixed(2)} GiB`;
}

/** `1,234,567`. */
export function count(n: number): string {
  return n.toLocaleString('en-US');
}

/** `1 row` / `3 rows`: a count with its noun, singular when it is one. */
export function plural(n: number, noun: string, nouns = `${noun}s`): string {
  return `${count(n)} ${n === 1 ? noun : nouns}`;
}

/** A span of seconds: `42 s`, `3 min`, `3 min 20 s`, `2 h 5 min`, `3 d 4 h`. */
export function span(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3_600) return join(Math.floor(s / 60), 'min', s % 60, 's');
  if (s < 86_400) return join(Math.floor(s / 3_600), 'h', Math.floor((s % 3_600) / 60), 'min');
  return join(Math.floor(s / 86_400), 'd', Math.floor((s % 86_400) / 3_600), 'h');
}

function join(major: number, majorUnit: string, minor: number, minorUnit: string): string {
  return minor === 0 ? `${major} ${majorUnit}` : `${major} ${majorUnit} ${minor} ${minorUnit}`;
}

/** How long ago `at` was, seen from `now`: `just now`, `42 s ago`, `3 min ago`; a future instant (clock skew) is `just now`. */
export function ago(at: string | Date, now: Date): string {
  const seconds = (now.getTime() - new Date(at).getTime()) / 1000;
  if (seconds < 1) return 'just now';
  return `${span(Math.floor(seconds) < 60 ? seconds : coarse(seconds))} ago`;
}

// An age needs one unit beyond the first minute: "3 min ago", not "3 min 20 s ago".
function coarse(seconds: number): number {
  if (seconds < 3_600) return Math.floor(seconds / 60) * 60;
  if (seconds < 86_400) return Math.floor(seconds / 3_600) * 3_600;
  return Math.floor(seconds / 86_400) * 86_400;
}

/** An instant as `2026-09-21 12:00:03Z (3 min ago)`, or one to come as `2026-09-22 12:00:00Z (in 23 h 59 min)`. */
export function when(at: string, now: Date): string {
  const text = new Date(at).toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
  const ahead = (new Date(at).getTime() - now.getTime()) / 1000;
  return `${text} (${ahead >= 1 ? `in ${span(ahead)}` : ago(at, now)})`;
}
