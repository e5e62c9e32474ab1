import { LosslessNumber, parse } from 'lossless-json';

/**
 * Exact JSON parsing. `JSON.parse` rounds every number to a double, which is exact only for
 * literals of at most 15 significant digits. A longer literal has a run of at least 16 digits
 * and points, which `longRuns` finds cheaply; text without one takes the fast path. (Digits
 * inside strings count too: harmless, only slower.)
 */
const RUN = 16;

function isDigitOrPoint(code: number): boolean {
  return (code >= 48 && code <= 57) || code === 46;
}

/**
 * The runs of 16 or more digits and points in `text`, as [start, end) pairs. Any such run
 * covers every 16th position, so the scan looks only there and widens around hits.
 */
function longRuns(text: string): number[] | null {
  let runs: number[] | null = null;
  const length = text.length;
  let i = RUN - 1;
  while (i < length) {
    if (!isDigitOrPoint(text.charCodeAt(i))) {
      i += RUN;
      continue;
    }
    let start = i;
    while (start > 0 && isDigitOrPoint(text.charCodeAt(start - 1))) start--;
    let end = i + 1;
    while (end < length && isDigitOrPoint(text.charCodeAt(end))) end++;
    if (end - start >= RUN) (runs ??= []).push(start, end);
    i = end + RUN;
  }
  return runs;
}

/**
 * Parses JSON text (a row, or any JSON) without losing numeric precision: numbers of more
 * than 15 significant digits become LosslessNumber (their exact text), the others numbers.
 * A plain number in the result is therefore the double nearest to a short literal, whose
 * shortest decimal form is that literal; the converter relies on this.
 *
 * Duplicate keys keep the last value, as `JSON.parse` does. Throws SyntaxError on bad JSON.
 */
export function parseJsonRow(text: string): unknown {
  return longRuns(text) === null ? JSON.parse(text) : parseJsonLossless(text);
}

/** The slow, always exact path of `parseJsonRow`. */
export function parseJsonLossless(text: string): unknown {
  return parse(text, null, { parseNumber, onDuplicateKey: lastWins });
}

/**
 * The long literals of a row's text and the doubles `JSON.parse` made of them, computed on
 * demand: a number in the parsed row that is not among them came from a short literal and is
 * exact. Integer columns only need the literals that can round to an integer, which are few
 * and cheap to tell apart (coordinates like 52.84173604397888 never do).
 */
export class LongLiterals {
  private all: number[] | undefined;
  private integral: number[] | undefined;

  /** `spans` holds [start, end) of each literal, sign and exponent included. */
  constructor(
    private readonly text: string,
    private readonly spans: readonly number[],
  ) {}

  /** The doubles of all long literals (what a decimal column must not take from a plain number). */
  doubles(): readonly number[] {
    this.all ??= this.values(() => true);
    return this.all;
  }

  /** The doubles of the long literals that may have rounded to an integer (for int and long columns). */
  integerDoubles(): readonly number[] {
    this.integral ??= this.values((start, end) => mayRoundToInteger(this.text, start, end));
    return this.integral;
  }

  private values(keep: (start: number, end: number) => boolean): number[] {
    const doubles: number[] = [];
    for (let i = 0; i < this.spans.length; i += 2) {
      const start = this.spans[i] as number;
      const end = this.spans[i + 1] as number;
      if (keep(start, end)) doubles.push(Number(this.text.slice(start, end)));
    }
    return doubles;
  }
}

/** The long literals of `text`, or null when it has none (then `JSON.parse` is exact). */
export function longLiterals(text: string): LongLiterals | null {
  const runs = longRuns(text);
  if (runs === null) return null;
  const spans: number[] = [];
  for (let r = 0; r < runs.length; r += 2) {
    const start = runs[r] as number;
    spans.push(text.charCodeAt(start - 1) === 45 ? start - 1 : start, exponentEnd(text, runs[r + 1] as number));
  }
  return new LongLiterals(text, spans);
}

/**
 * Whether the literal at [start, end) can be an integer or round to one. A literal I.F with
 * k integer digits lies at least 10^-j from every integer when one of the first j = 15 - k
 * fraction digits breaks a run of zeros or nines, which is more than half a double's spacing
 * there (below 10^k × 2.3e-16): such a literal cannot round to an integer.
 */
function mayRoundToInteger(text: string, start: number, end: number): boolean {
  let point = -1;
  for (let i = start; i < end; i++) {
    const code = text.charCodeAt(i);
    if (code === 101 || code === 69) return true;
    if (code === 46) point = i;
  }
  if (point < 0) return true;
  let k = 0;
  for (let i = start; i < point; i++) {
    const code = text.charCodeAt(i);
    if (code >= 49 && code <= 57) k = point - i;
    if (k > 0) break;
  }
  const j = 15 - k;
  if (j <= 0) return true;
  const first = text.charCodeAt(point + 1);
  if (first !== 48 && first !== 57) return false;
  for (let i = point + 2; i <= point + j && i < end; i++) {
    if (text.charCodeAt(i) !== first) return false;
  }
  return true;
}

/** Where an exponent (`e`, optional sign, digits) starting at `at` ends; `at` when there is none. */
function exponentEnd(text: string, at: number): number {
  const e = text.charCodeAt(at);
  if (e !== 101 && e !== 69) return at;
  let i = at + 1;
  const sign = text.charCodeAt(i);
  if (sign === 43 || sign === 45) i++;
  const digits = i;
  while (i < text.length && text.charCodeAt(i) >= 48 && text.charCodeAt(i) <= 57) i++;
  return i > digits ? i : at;
}

function parseNumber(literal: string): number | LosslessNumber {
  return significantDigits(literal) <= 15 ? Number(literal) : new LosslessNumber(literal);
}

function significantDigits(literal: string): number {
  const end = literal.search(/[eE]/);
  const mantissa = (end < 0 ? literal : literal.slice(0, end)).replace(/[-.]/g, '').replace(/^0+/, '').replace(/0+$/, '');
  return mantissa.length;
}

function lastWins(info: { newValue: unknown }): unknown {
  return info.newValue;
}
