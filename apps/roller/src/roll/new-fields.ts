import { COLUMN_NAME_PATTERN, formatInferredType, ICEBERG_METADATA_COLUMNS, type InferredType, inferType } from '@tablemere/contracts';
import { type IcebergType, type NestedField, type NewColumn, parseJsonRow, type SchemaJson, schemaFromJson } from '@tablemere/iceberg';

/** A field the roll's rows carry and the table lacks: where, and every value rows gave it. */
interface Found {
  parent: string[];
  name: string;
  /** The names of the struct it would join, existing ones: a name differing only in case is not added. */
  siblings: readonly string[];
  values: unknown[];
}

/** Distinct value types tried, in first-seen order, before a conflicting field keeps what it has. */
const MOST_KINDS = 16;
const MAX_NAME_LENGTH = 255;

/**
 * The columns to add for the fields of `rows` (JSON texts) that the schema lacks, top level or
 * nested (in a struct, a list's element struct, a map's value struct), in the order the rows
 * first carry them, typed by the rules of table inference (`inferType`, packages/contracts).
 * A field whose values agree gets the type all of them imply (1 and 2.5 make double); where
 * they disagree (5 and "five"), the type of the first value wins, widened by each later kind
 * that agrees with what was taken, and the rows whose value does not fit are rejected by
 * validation. Nulls carry no data: a field, or a member of a new struct, with nothing but null
 * (or only [] or {}) gets no column, and a name a column cannot have is not added either.
 */
export function planNewColumns(schema: SchemaJson, rows: Iterable<string>): NewColumn[] {
  const fields = schemaFromJson(schema).fields;
  const found = new Map<string, Found>();
  const note = (parent: string[], name: string, value: unknown, siblings: readonly NestedField[]) => {
    const key = JSON.stringify([...parent, name]);
    let entry = found.get(key);
    if (entry === undefined) found.set(key, (entry = { parent, name, siblings: siblings.map((f) => f.name), values: [] }));
    entry.values.push(withoutNulls(value));
  };
  for (const text of rows) {
    let row: unknown;
    try {
      // Exactly, as the writer reads it: an integer beyond 2^53 is told from a double.
      row = parseJsonRow(text);
    } catch {
      continue;
    }
    walkStruct(fields, row, [], note);
  }
  const entries = [...found.values()];
  const columns: NewColumn[] = [];
  for (const entry of entries) {
    if (!nameAllowed(entry, entries)) continue;
    const type = firstSeenType(entry.values);
    if (type !== undefined) columns.push({ name: entry.name, parent: entry.parent, type: icebergType(type) });
  }
  return columns;
}

type Note = (parent: string[], name: string, value: unknown, siblings: readonly NestedField[]) => void;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && (value as { isLosslessNumber?: unknown }).isLosslessNumber !== true;
}

function walkStruct(fields: readonly NestedField[], value: unknown, path: string[], note: Note): void {
  if (!isObject(value)) return;
  for (const [name, item] of Object.entries(value)) {
    const field = fields.find((f) => f.name === name);
    if (field === undefined) {
      if (item !== null) note(path, name, item, fields);
    } else walkType(field.type, item, [...path, name], note);
  }
}

/** Into a known field's value: a list's elements and a map's values keep the field's path. */
function walkType(type: IcebergType, value: unknown, path: string[], note: Note): void {
  if (type.kind === 'struct') walkStruct(type.fields, value, path, note);
  else if (type.kind === 'list' && Array.isArray(value)) for (const item of value) walkType(type.element, item, path, note);
  else if (type.kind === 'map') {
    // Maps come as a JSON object (string keys) or as [{"key": ..., "value": ...}] entries.
    const values = Array.isArray(value) ? value.map((entry) => (isObject(entry) ? entry.value : undefined)) : isObject(value) ? Object.values(value) : [];
    for (const item of values) walkType(type.value, item, path, note);
  }
}

/** The value with its objects' null members left out: the writer passes over them, and inference would refuse them. */
function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (!isObject(value)) return value;
  return Object.fromEntries(Object.entries(value).flatMap(([k, v]) => (v === null ? [] : [[k, withoutNulls(v)]])));
}

/**
 * A name the field may have as a column: the column name rule, not an Iceberg metadata column
 * at the top level, and not one that differs only in case from another in its struct (engines
 * resolving names case-insensitively could not tell them apart).
 */
function nameAllowed(entry: Found, all: readonly Found[]): boolean {
  const lower = entry.name.toLowerCase();
  if (!COLUMN_NAME_PATTERN.test(entry.name) || entry.name.length > MAX_NAME_LENGTH) return false;
  if (entry.parent.length === 0 && ICEBERG_METADATA_COLUMNS.includes(lower)) return false;
  if (entry.siblings.some((name) => name.toLowerCase() === lower)) return false;
  const parent = JSON.stringify(entry.parent);
  return !all.some((other) => other !== entry && other.name.toLowerCase() === lower && JSON.stringify(other.parent) === parent);
}

/**
 * The type of a field from its values: all of them when they agree; otherwise the values
 * grouped by the type each implies alone, taken in first-seen order while they still agree
 * with those taken. Undefined when not even the first kind gives a type.
 */
function firstSeenType(values: readonly unknown[]): InferredType | undefined {
  const all = inferType(values);
  if (all.ok) return all.type;
  const groups = new Map<string, unknown[]>();
  for (const value of values) {
    const alone = inferType([value]);
    if (!alone.ok) continue;
    const key = formatInferredType(alone.type);
    if (!groups.has(key) && groups.size >= MOST_KINDS) continue;
    const group = groups.get(key);
    if (group === undefined) groups.set(key, [value]);
    else group.push(value);
  }
  let taken: unknown[] = [];
  let type: InferredType | undefined;
  for (const group of groups.values()) {
    const tried = inferType([...taken, ...group]);
    if (!tried.ok) continue;
    taken = [...taken, ...group];
    type = tried.type;
  }
  return type;
}

/** The Iceberg type of an inferred one; ids are placeholders the schema change assigns. */
function icebergType(type: InferredType): IcebergType {
  switch (type.kind) {
    case 'struct':
      return { kind: 'struct', fields: type.fields.map((f) => ({ id: 0, name: f.name, required: false, type: icebergType(f.type) })) };
    case 'list':
      return { kind: 'list', elementId: 0, elementRequired: false, element: icebergType(type.element) };
    default:
      return type;
  }
}
