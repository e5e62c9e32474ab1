/**
 * Iceberg data types (format v2, plus the v3 types this library recognises but cannot write).
 * Pure data: validation, Arrow mapping and metrics live in one table in `writer/type-table.ts`.
 */

/** Primitive types without parameters, named as Iceberg's JSON names them. */
export type SimpleTypeName =
  | 'boolean'
  | 'int'
  | 'long'
  | 'float'
  | 'double'
  | 'date'
  | 'time'
  | 'timestamp'
  | 'timestamptz'
  | 'timestamp_ns'
  | 'timestamptz_ns'
  | 'string'
  | 'uuid'
  | 'binary';

export interface SimpleType {
  readonly kind: SimpleTypeName;
}

export interface DecimalType {
  readonly kind: 'decimal';
  readonly precision: number;
  readonly scale: number;
}

export interface FixedType {
  readonly kind: 'fixed';
  readonly length: number;
}

/**
 * A type that exists in Iceberg schemas (v3: geometry, geography, variant, unknown,
 * nanosecond timestamps) but that this library does not write. `json` is the type exactly as
 * the schema carried it, so the schema serialises back unchanged.
 */
export interface UnsupportedType {
  readonly kind: 'unsupported';
  readonly name: string;
  readonly json: unknown;
}

export type PrimitiveType = SimpleType | DecimalType | FixedType;

export interface NestedField {
  readonly id: number;
  readonly name: string;
  readonly required: boolean;
  readonly type: IcebergType;
  readonly doc?: string;
  /** v3 default values, kept as JSON so they round-trip. */
  readonly initialDefault?: unknown;
  readonly writeDefault?: unknown;
}

export interface StructType {
  readonly kind: 'struct';
  readonly fields: readonly NestedField[];
}

export interface ListType {
  readonly kind: 'list';
  readonly elementId: number;
  readonly elementRequired: boolean;
  readonly element: IcebergType;
}

export interface MapType {
  readonly kind: 'map';
  readonly keyId: number;
  readonly key: IcebergType;
  readonly valueId: number;
  readonly valueRequired: boolean;
  readonly value: IcebergType;
}

export type NestedType = StructType | ListType | MapType;
export type IcebergType = PrimitiveType | UnsupportedType | NestedType;

const SIMPLE_NAMES: ReadonlySet<string> = new Set<SimpleTypeName>([
  'boolean',
  'int',
  'long',
  'float',
  'double',
  'date',
  'time',
  'timestamp',
  'timestamptz',
  'timestamp_ns',
  'timestamptz_ns',
  'string',
  'uuid',
  'binary',
]);

/** v3 type names without parameters that this library recognises and refuses to write. */
const UNSUPPORTED_NAMES: ReadonlySet<string> = new Set(['variant', 'unknown']);
/** v3 parameterised types, e.g. `geometry(srid:4326)` or `geography(OGC:CRS84, spherical)`. */
const UNSUPPORTED_PREFIXES = ['geometry', 'geography'];

const DECIMAL = /^decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)$/;
const FIXED = /^fixed\[\s*(\d+)\s*\]$/;

/** Decimal128 holds at most 38 digits; Iceberg caps precision there too. */
export const MAX_DECIMAL_PRECISION = 38;

/** Parses a primitive type string as Iceberg JSON writes it: `long`, `decimal(10,2)`, `fixed[16]`. */
export function parseTypeString(text: string): PrimitiveType | UnsupportedType {
  const name = text.trim();
  if (SIMPLE_NAMES.has(name)) return { kind: name as SimpleTypeName };
  const decimal = DECIMAL.exec(name);
  if (decimal) {
    const precision = Number(decimal[1]);
    const scale = Number(decimal[2]);
    if (precision < 1 || precision > MAX_DECIMAL_PRECISION || scale > precision) {
      throw invalidType(text, `precision must be 1..${MAX_DECIMAL_PRECISION} and scale at most the precision`);
    }
    return { kind: 'decimal', precision, scale };
  }
  const fixed = FIXED.exec(name);
  if (fixed) {
    const length = Number(fixed[1]);
    if (length < 1 || !Number.isSafeInteger(length)) throw invalidType(text, 'length must be positive');
    return { kind: 'fixed', length };
  }
  if (UNSUPPORTED_NAMES.has(name) || UNSUPPORTED_PREFIXES.some((prefix) => isParameterised(name, prefix))) {
    return { kind: 'unsupported', name: name.replace(/\(.*$/s, ''), json: text };
  }
  throw invalidType(text, 'not an Iceberg type');
}

function isParameterised(name: string, prefix: string): boolean {
  return name === prefix || (name.startsWith(`${prefix}(`) && name.endsWith(')'));
}

/** The Iceberg type string of a primitive type, the inverse of `parseTypeString`. */
export function typeString(type: PrimitiveType): string {
  switch (type.kind) {
    case 'decimal':
      return `decimal(${type.precision}, ${type.scale})`;
    case 'fixed':
      return `fixed[${type.length}]`;
    default:
      return type.kind;
  }
}

/** A short human name of any type, used in messages (`list<string>`, `struct`, `geometry`). */
export function describeType(type: IcebergType): string {
  switch (type.kind) {
    case 'struct':
      return 'struct';
    case 'list':
      return `list<${describeType(type.element)}>`;
    case 'map':
      return `map<${describeType(type.key)}, ${describeType(type.value)}>`;
    case 'unsupported':
      return type.name;
    default:
      return typeString(type);
  }
}

export function isPrimitive(type: IcebergType): type is PrimitiveType {
  return type.kind !== 'struct' && type.kind !== 'list' && type.kind !== 'map' && type.kind !== 'unsupported';
}

/** True when the type is unsupported or holds an unsupported type anywhere inside it. */
export function containsUnsupported(type: IcebergType): boolean {
  switch (type.kind) {
    case 'unsupported':
      return true;
    case 'struct':
      return type.fields.some((field) => containsUnsupported(field.type));
    case 'list':
      return containsUnsupported(type.element);
    case 'map':
      return containsUnsupported(type.key) || containsUnsupported(type.value);
    default:
      return false;
  }
}

/** A malformed type is a broken schema, not a condition callers branch on. */
function invalidType(text: string, why: string): TypeError {
  return new TypeError(`invalid Iceberg type ${JSON.stringify(text)}: ${why}`);
}
