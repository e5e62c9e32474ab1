import { LosslessNumber, parse } from 'lossless-json';

/**
 * Parses JSON text (a row, or any JSON) without losing numeric precision. `JSON.parse` rounds
 * every number to a double, which is exact only for literals of at most 15 significant
 * digits. Text with no run of 16 digits (or digits and points) cannot hold a longer literal
 * and takes the fast path; other text is parsed with lossless-json, where numbers longer
 * than 15 digits stay LosslessNumber (their exact text) and the others become numbers.
 *
 * The converter relies on this: a plain number it receives is the double nearest to a short
 * literal, so its shortest decimal form is that literal.
 *
 * Duplicate keys keep the last value, as `JSON.parse` does. Throws SyntaxError on bad JSON.
 */
export function parseJsonRow(text: string): unknown {
  return LONG_LITERAL.test(text) ? parse(text, null, { parseNumber, onDuplicateKey: lastWins }) : JSON.parse(text);
}

/** A possible numeric literal of 16+ significant digits (digits inside strings also match: harmless). */
const LONG_LITERAL = /\d[\d.]{15}/;

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
