import { isInteger, isSafeNumber, parse, stringify } from 'lossless-json';

/**
 * JSON for catalog traffic. Iceberg snapshot ids are random 63-bit longs and `JSON.parse`
 * rounds anything beyond 2^53 (trap 1 of the spec notes), so catalog responses are parsed
 * losslessly and ids are sent back exactly.
 */

/** Keys whose values are snapshot ids anywhere in table metadata, refs, logs and statistics. */
const SNAPSHOT_ID_KEYS: ReadonlySet<string> = new Set([
  'snapshot-id',
  'parent-snapshot-id',
  'current-snapshot-id',
  'source-snapshot-id',
]);

/** Integers that fit a double stay numbers; larger ones become bigint; other numbers are doubles. */
function parseNumber(text: string): number | bigint {
  if (isInteger(text) && !isSafeNumber(text)) return BigInt(text);
  return Number(text);
}

/** Snapshot ids are always bigint, whatever their size, so callers compare like with like. */
function normaliseIds(key: string, value: unknown): unknown {
  if (SNAPSHOT_ID_KEYS.has(key) && typeof value === 'number' && Number.isInteger(value)) {
    return BigInt(value);
  }
  return value;
}

/** Parses JSON without losing integer precision; snapshot-id fields come back as bigint. */
export function parseJson(text: string): unknown {
  return parse(text, normaliseIds, parseNumber);
}

/** Serialises JSON writing bigint values as exact integer literals. */
export function stringifyJson(value: unknown): string {
  const text = stringify(value);
  if (text === undefined) throw new TypeError('value is not representable as JSON');
  return text;
}
