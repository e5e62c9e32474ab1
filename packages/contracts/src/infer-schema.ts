import { formatIcebergPrimitive, type IcebergPrimitive } from './iceberg-types.ts';
import { COLUMN_NAME_PATTERN } from './names.ts';

/**
 * Iceberg types inferred from JSON rows. The rules (issue 25): integers → long, other numbers →
 * double, RFC 3339 date-times → timestamptz, other strings → string, booleans → boolean,
 * objects → struct, arrays → list. Every inferred field is optional, since a later row may omit
 * it. A field is refused, with its path and why, when its values disagree (a number here, a
 * string there), when nothing tells its type (only nulls, only empty arrays or objects), or
 * when its name cannot be a column. Numbers are judged by value, as the writer validates
 * them (`7.0` is an integer to a long column), so an inferred schema accepts every row it was
 * inferred from. The edge cases are written down in research/45-sink-creates-table.md.
 */

export type InferredType = IcebergPrimitive | InferredStruct | InferredList;

/** A field of an inferred struct (or a column of an inferred schema); always optional. */
export interface InferredField {
  name: string;
  type: InferredType;
}

export interface InferredStruct {
  kind: 'struct';
  fields: InferredField[];
}

/** Elements are optional: a null element is kept as null. */
export interface InferredList {
  kind: 'list';
  element: InferredType;
}

/** One field that could not be typed: `path` as the writer's rejects name it (`address.zip`, `tags[]` for elements). */
export interface FieldRefusal {
  path: string;
  reason: string;
}

export type TypeInference = { ok: true; type: InferredType } | { ok: false; refusals: FieldRefusal[] };

export type SchemaInference = { ok: true; fields: InferredField[] } | { ok: false; refusals: FieldRefusal[] };

export interface InferOptions {
  /** Top-level names rows must not carry, each with why (e.g. a column the writer fills itself). */
  reserved?: Readonly<Record<string, string>>;
}

/**
 * Names Iceberg engines give their metadata columns (Spark, Trino, PyIceberg): a data column
 * of the same name is shadowed or refused there, so no top-level field may take one.
 */
export const ICEBERG_METADATA_COLUMNS: readonly string[] = [
  '_file',
  '_pos',
  '_deleted',
  '_spec_id',
  '_partition',
  '_row_id',
  '_last_updated_sequence_number',
  '_change_type',
  '_change_ordinal',
  '_commit_snapshot_id',
];

const MAX_NAME_LENGTH = 255;
const TWO_53 = 2 ** 53;
const TWO_63 = 2n ** 63n;

/**
 * What one value says about its field's type. Numbers split by what long and double hold
 * exactly: `integer` (|v| ≤ 2^53: both), `wide_integer` (a long only), `fraction` (a double
 * only, as is an integer beyond the long range).
 */
type Kind = 'boolean' | 'integer' | 'wide_integer' | 'fraction' | 'timestamp' | 'string' | 'object' | 'array';

/** A number a lossless JSON parser kept as its literal (lossless-json's LosslessNumber); the writer reads it the same way. */
function losslessLiteral(value: object): string | undefined {
  const v = value as { isLosslessNumber?: unknown; value?: unknown };
  return v.isLosslessNumber === true && typeof v.value === 'string' ? v.value : undefined;
}

const JSON_NUMBER = /^(-?)(0|[1-9]\d*)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/** A number's kind, or a refusal reason (beyond the double range). */
function numberKind(value: number | bigint | string): Kind | string {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return 'a number beyond the double range';
    if (!Number.isInteger(value)) return 'fraction';
    if (Math.abs(value) <= TWO_53) return 'integer';
    return Math.abs(value) < 2 ** 63 ? 'wide_integer' : 'fraction';
  }
  if (typeof value === 'bigint') return integerKind(value);
  const m = JSON_NUMBER.exec(value);
  if (m === null) return `"${value}", which is not a JSON number`;
  if (!Number.isFinite(Number(value))) return 'a number beyond the double range';
  const whole = m[2] ?? '';
  const fraction = (m[3] ?? '').replace(/0+$/, '');
  const exponent = m[4] === undefined ? 0 : Number(m[4]);
  const digits = (whole + fraction).replace(/^0+/, '');
  if (digits === '') return 'integer';
  const shift = exponent - fraction.length;
  if (shift < 0) {
    // Still integral when the digits end in at least -shift zeros (e.g. 1200e-2).
    const zeros = /0*$/.exec(digits)?.[0].length ?? 0;
    if (zeros < -shift) return 'fraction';
    return integerKind(BigInt(m[1] + digits.slice(0, digits.length + shift)));
  }
  if (digits.length + shift > 19) return 'fraction';
  return integerKind(BigInt(m[1] + digits) * 10n ** BigInt(shift));
}

function integerKind(n: bigint): Kind {
  if (n < -TWO_63 || n >= TWO_63) return 'fraction';
  return n >= -BigInt(TWO_53) && n <= BigInt(TWO_53) ? 'integer' : 'wide_integer';
}

const DAYS_IN_MONTH = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

const RFC_3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:[Zz]|[+-](\d{2}):(\d{2}))$/;

/**
 * Whether `text` is an RFC 3339 date-time a timestamptz column takes: a zone designator is
 * required, and digits past the microsecond must be zeros (the column does not round), so a
 * nanosecond time or a leap second (`:60`) stays a string.
 */
export function isTimestamptzText(text: string): boolean {
  const m = RFC_3339.exec(text);
  if (m === null) return false;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const leap = month === 2 && year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  if (month < 1 || month > 12 || day < 1 || day > (DAYS_IN_MONTH[month] as number) + (leap ? 1 : 0)) return false;
  if (hour > 23 || minute > 59 || second > 59) return false;
  if (m[7] !== undefined && /[1-9]/.test(m[7].slice(6))) return false;
  return m[8] === undefined || (Number(m[8]) <= 23 && Number(m[9]) <= 59);
}

/** What the values of one field say, gathered across rows. */
class Evidence {
  readonly kinds = new Set<Kind>();
  /** Values past this refusal (e.g. 1e400) make the field untypable whatever else it holds. */
  invalid: string | undefined;
  /** The members of every object value, by key. */
  readonly members = new Map<string, unknown[]>();
  /** The elements of every array value. */
  readonly elements: unknown[] = [];
  sawNull = false;

  add(value: unknown): void {
    if (value === null || value === undefined) {
      this.sawNull = true;
      return;
    }
    switch (typeof value) {
      case 'boolean':
        this.kinds.add('boolean');
        return;
      case 'number':
      case 'bigint':
        this.addNumber(value);
        return;
      case 'string':
        this.kinds.add(isTimestamptzText(value) ? 'timestamp' : 'string');
        return;
      case 'object':
        break;
      default:
        this.invalid ??= `a ${typeof value} is not a JSON value`;
        return;
    }
    const literal = losslessLiteral(value);
    if (literal !== undefined) {
      this.addNumber(literal);
    } else if (Array.isArray(value)) {
      this.kinds.add('array');
      for (const element of value) this.elements.push(element);
    } else {
      this.kinds.add('object');
      for (const [key, member] of Object.entries(value)) {
        let values = this.members.get(key);
        if (values === undefined) this.members.set(key, (values = []));
        values.push(member);
      }
    }
  }

  private addNumber(value: number | bigint | string): void {
    const kind = numberKind(value);
    if (kind.includes(' ')) this.invalid ??= kind;
    else this.kinds.add(kind as Kind);
  }
}

/** The words for kinds, in the order messages list them. */
const KIND_WORDS: Record<Kind, string> = {
  boolean: 'booleans',
  integer: 'numbers',
  wide_integer: 'numbers',
  fraction: 'numbers',
  timestamp: 'strings',
  string: 'strings',
  object: 'objects',
  array: 'arrays',
};

function described(kinds: ReadonlySet<Kind>): string {
  const words = new Set([...kinds].map((kind) => KIND_WORDS[kind]));
  return [...new Set(Object.values(KIND_WORDS))].filter((word) => words.has(word)).join(' and ');
}

/**
 * The type of a field from the values it takes across rows (nulls and absent values
 * ignored), recursing into objects and arrays; or every refusal inside it, paths relative to
 * the field (`""` for the field itself).
 */
export function inferType(values: readonly unknown[]): TypeInference {
  const evidence = new Evidence();
  for (const value of values) evidence.add(value);
  const refusals: FieldRefusal[] = [];
  const type = typeOf(evidence, '', refusals);
  return type === undefined ? { ok: false, refusals } : { ok: true, type };
}

/**
 * A schema from sample rows (JSON objects): every field any row has becomes an optional
 * column. Refused when a row is not an object, or with every field that cannot be typed.
 */
export function inferSchema(rows: readonly unknown[], options: InferOptions = {}): SchemaInference {
  if (rows.length === 0) return { ok: false, refusals: [{ path: '', reason: 'no rows to infer from' }] };
  const notObject = rows.findIndex((row) => typeof row !== 'object' || row === null || Array.isArray(row) || losslessLiteral(row) !== undefined);
  if (notObject >= 0) return { ok: false, refusals: [{ path: '', reason: `row ${notObject + 1} is not a JSON object` }] };
  const root = new Evidence();
  for (const row of rows) root.add(row);
  const refusals: FieldRefusal[] = [];
  // By lower case: engines that resolve names case-insensitively would see `_FILE` as `_file`.
  const reserved = new Map<string, string>([
    ...ICEBERG_METADATA_COLUMNS.map((name): [string, string] => [name, 'is the name of an Iceberg metadata column']),
    ...Object.entries(options.reserved ?? {}).map(([name, why]): [string, string] => [name.toLowerCase(), why]),
  ]);
  const skip = new Set<string>();
  for (const key of root.members.keys()) {
    const why = reserved.get(key.toLowerCase());
    if (why === undefined) continue;
    refusals.push({ path: key, reason: `"${key}" ${why}` });
    skip.add(key);
  }
  const fields = structFields(root, '', refusals, skip);
  return refusals.length > 0 ? { ok: false, refusals } : { ok: true, fields: fields ?? [] };
}

function join(path: string, name: string): string {
  return path === '' ? name : `${path}.${name}`;
}

function typeOf(evidence: Evidence, path: string, refusals: FieldRefusal[]): InferredType | undefined {
  const refuse = (reason: string) => {
    refusals.push({ path, reason });
    return undefined;
  };
  if (evidence.invalid !== undefined) return refuse(`holds ${evidence.invalid}`);
  const { kinds } = evidence;
  if (kinds.size === 0) return refuse('holds only null; give its type');
  // Numbers may widen to double and date-times to string; any other two kinds clash.
  const families = new Set([...kinds].map((kind) => KIND_WORDS[kind]));
  if (families.size > 1) return refuse(`holds ${described(kinds)}; one type is needed`);
  if (families.has('numbers')) {
    if (!kinds.has('fraction')) return { kind: 'long' };
    if (kinds.has('wide_integer')) {
      return refuse('holds integers beyond 2^53, which a double would round, and numbers a long cannot hold; give its type');
    }
    return { kind: 'double' };
  }
  if (families.has('strings')) return { kind: kinds.has('string') ? 'string' : 'timestamptz' };
  if (kinds.has('boolean')) return { kind: 'boolean' };
  if (kinds.has('array')) {
    const elements = new Evidence();
    for (const element of evidence.elements) elements.add(element);
    if (elements.kinds.size === 0 && elements.invalid === undefined) {
      return refuse(evidence.elements.length === 0 ? 'holds only empty arrays; give its type' : 'holds only null elements; give its type');
    }
    const element = typeOf(elements, `${path}[]`, refusals);
    return element === undefined ? undefined : { kind: 'list', element };
  }
  if (evidence.members.size === 0) return refuse('holds only empty objects; give its type');
  const fields = structFields(evidence, path, refusals, new Set());
  return fields === undefined ? undefined : { kind: 'struct', fields };
}

/** The fields of an object's members, in first-seen order; undefined when any is refused. */
function structFields(evidence: Evidence, path: string, refusals: FieldRefusal[], skip: ReadonlySet<string>): InferredField[] | undefined {
  const before = refusals.length;
  const byLowerName = new Map<string, string[]>();
  for (const key of evidence.members.keys()) {
    const lower = key.toLowerCase();
    byLowerName.set(lower, [...(byLowerName.get(lower) ?? []), key]);
  }
  const fields: InferredField[] = [];
  for (const [key, values] of evidence.members) {
    if (skip.has(key)) continue;
    const fieldPath = join(path, key);
    if (!COLUMN_NAME_PATTERN.test(key) || key.length > MAX_NAME_LENGTH) {
      refusals.push({ path: fieldPath, reason: `"${key}" cannot be a column name: use at most ${MAX_NAME_LENGTH} letters, digits and underscores, starting with a letter or underscore` });
      continue;
    }
    const spellings = byLowerName.get(key.toLowerCase()) ?? [];
    if (spellings.length > 1) {
      refusals.push({ path: fieldPath, reason: `"${spellings.join('", "')}" differ only in case, which engines do not tell apart` });
      continue;
    }
    const member = new Evidence();
    for (const value of values) member.add(value);
    const type = typeOf(member, fieldPath, refusals);
    if (type !== undefined) fields.push({ name: key, type });
  }
  return refusals.length > before ? undefined : fields;
}

/** `long`, `list<string>`, `struct<a: long, b: list<timestamptz>>`: for messages and CLI output. */
export function formatInferredType(type: InferredType): string {
  switch (type.kind) {
    case 'struct':
      return `struct<${type.fields.map((f) => `${f.name}: ${formatInferredType(f.type)}`).join(', ')}>`;
    case 'list':
      return `list<${formatInferredType(type.element)}>`;
    default:
      return formatIcebergPrimitive(type);
  }
}

/** A field of a schema being created or extended, as the REST catalog takes it. */
export type NewFieldJson = {
  id: number;
  name: string;
  required: boolean;
  type: NewTypeJson;
};

export type NewTypeJson =
  | string
  | { type: 'struct'; fields: NewFieldJson[] }
  | { type: 'list'; 'element-id': number; element: NewTypeJson; 'element-required': boolean };

/**
 * Inferred fields in the catalog's JSON, with fresh ids from `firstId` on: the fields of one
 * level first, then their children (as Iceberg's own id assignment does). `nextId` is the
 * first id left unused.
 */
export function inferredFieldsJson(fields: readonly InferredField[], firstId: number): { fields: NewFieldJson[]; nextId: number } {
  let next = firstId;
  const level = (members: readonly InferredField[]): NewFieldJson[] => {
    const ids = members.map(() => next++);
    return members.map((field, i) => ({ id: ids[i] as number, name: field.name, required: false, type: typeJson(field.type) }));
  };
  const typeJson = (type: InferredType): NewTypeJson => {
    switch (type.kind) {
      case 'struct':
        return { type: 'struct', fields: level(type.fields) };
      case 'list': {
        const elementId = next++;
        return { type: 'list', 'element-id': elementId, element: typeJson(type.element), 'element-required': false };
      }
      default:
        return formatIcebergPrimitive(type);
    }
  };
  const json = level(fields);
  return { fields: json, nextId: next };
}
