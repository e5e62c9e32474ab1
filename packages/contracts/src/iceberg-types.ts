import { z } from 'zod';

/**
 * The Iceberg primitive types a column can be created with, in the spec's string form:
 * `decimal(P,S)` and `fixed[N]` carry parameters, the rest are plain words.
 */
export const PLAIN_PRIMITIVE_TYPES = [
  'boolean',
  'int',
  'long',
  'float',
  'double',
  'date',
  'time',
  'timestamp',
  'timestamptz',
  'string',
  'uuid',
  'binary',
] as const;

export type PlainPrimitiveType = (typeof PLAIN_PRIMITIVE_TYPES)[number];

export type IcebergPrimitive =
  | { kind: PlainPrimitiveType }
  | { kind: 'decimal'; precision: number; scale: number }
  | { kind: 'fixed'; length: number };

/** Iceberg caps decimal precision at 38 digits (it must fit a 16-byte unscaled value). */
export const MAX_DECIMAL_PRECISION = 38;

export const PRIMITIVE_TYPE_LIST = `${PLAIN_PRIMITIVE_TYPES.slice(0, 5).join(' ')} decimal(P,S) ${PLAIN_PRIMITIVE_TYPES.slice(5, 11).join(' ')} fixed[N] binary`;

export type ParsedPrimitive = { ok: true; type: IcebergPrimitive } | { ok: false; reason: string };

const PLAIN: ReadonlySet<string> = new Set(PLAIN_PRIMITIVE_TYPES);

/**
 * Parses an Iceberg primitive type string. Case and spaces inside the parameters are
 * forgiven (as the Java reference does); `formatIcebergPrimitive` gives the canonical form.
 */
export function parseIcebergPrimitive(text: string): ParsedPrimitive {
  const type = text.trim().toLowerCase();
  if (PLAIN.has(type)) return { ok: true, type: { kind: type as PlainPrimitiveType } };

  const decimal = /^decimal\s*\(\s*(\d+)\s*,\s*(\d+)\s*\)$/.exec(type);
  if (decimal) {
    const precision = Number(decimal[1]);
    const scale = Number(decimal[2]);
    if (precision < 1 || precision > MAX_DECIMAL_PRECISION) {
      return { ok: false, reason: `decimal precision must be 1 to ${MAX_DECIMAL_PRECISION}` };
    }
    if (scale > precision) return { ok: false, reason: `decimal scale must be 0 to the precision (${precision})` };
    return { ok: true, type: { kind: 'decimal', precision, scale } };
  }

  const fixed = /^fixed\s*\[\s*(\d+)\s*\]$/.exec(type);
  if (fixed) {
    const length = Number(fixed[1]);
    if (length < 1 || !Number.isSafeInteger(length)) return { ok: false, reason: 'fixed length must be at least 1' };
    return { ok: true, type: { kind: 'fixed', length } };
  }

  if (/^decimal\b/.test(type)) return { ok: false, reason: 'write decimal(P,S), e.g. decimal(10,2)' };
  if (/^fixed\b/.test(type)) return { ok: false, reason: 'write fixed[N], e.g. fixed[16]' };
  return { ok: false, reason: `unknown type "${text}"; types: ${PRIMITIVE_TYPE_LIST}` };
}

/** The spec's canonical string: `decimal(10,2)`, `fixed[16]`, `long`. */
export function formatIcebergPrimitive(type: IcebergPrimitive): string {
  switch (type.kind) {
    case 'decimal':
      return `decimal(${type.precision},${type.scale})`;
    case 'fixed':
      return `fixed[${type.length}]`;
    default:
      return type.kind;
  }
}

/** A primitive type string in any accepted spelling; parses to the canonical form. */
export const IcebergPrimitiveType = z.string().transform((text, ctx) => {
  const parsed = parseIcebergPrimitive(text);
  if (!parsed.ok) {
    ctx.addIssue({ code: 'custom', message: parsed.reason });
    return z.NEVER;
  }
  return formatIcebergPrimitive(parsed.type);
});

/**
 * A field type as a catalog returns it: a primitive string, or a nested struct/list/map
 * object for tables other writers created.
 */
export const IcebergTypeJson = z.union([z.string(), z.looseObject({ type: z.string() })]);
