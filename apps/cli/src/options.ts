import { usageError } from './errors.ts';

/** A commander parser for a whole, non-negative number flag (`--roll-seconds 300`). */
export function integerOption(flag: string): (text: string) => number {
  return (text) => {
    if (!/^\d+$/.test(text.trim())) throw usageError(`${flag} '${text}': give a whole number`);
    const value = Number(text.trim());
    if (!Number.isSafeInteger(value)) throw usageError(`${flag} '${text}': too large`);
    return value;
  };
}

const sizeUnits: Readonly<Record<string, number>> = { '': 1, b: 1, kib: 1024, mib: 1024 ** 2, gib: 1024 ** 3 };

/** A commander parser for a byte count, plain or with a binary unit (`33554432`, `48MiB`). */
export function sizeOption(flag: string): (text: string) => number {
  return (text) => {
    const match = /^(\d+)\s*([a-z]*)$/i.exec(text.trim());
    const unit = sizeUnits[match?.[2]?.toLowerCase() ?? 'none'];
    if (!match || unit === undefined) throw usageError(`${flag} '${text}': give bytes, or a number with KiB, MiB or GiB (e.g. 48MiB)`);
    const value = Number(match[1]) * unit;
    if (!Number.isSafeInteger(value)) throw usageError(`${flag} '${text}': too large`);
    return value;
  };
}
