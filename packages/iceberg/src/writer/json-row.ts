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
 * The doubles `JSON.parse` makes of the long literals in `text`, or null when there are none:
 * a number in the parsed value that is not among them came from a short literal and is exact.
 */
export function roundedLiterals(text: string): readonly number[] | null {
  const runs = longRuns(text);
  if (runs === null) return null;
  const doubles: number[] = [];
  for (let r = 0; r < runs.length; r += 2) {
    let start = runs[r] as number;
    let end = runs[r + 1] as number;
    if (text.charCodeAt(start - 1) === 45) start--;
    end = exponentEnd(text, end);
    doubles.push(Number(text.slice(start, end)));
  }
  return doubles;
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
