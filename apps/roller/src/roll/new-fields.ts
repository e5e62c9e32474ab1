import { columnPath, type IcebergType, type NestedField, type NewColumn, type SchemaJson, schemaFromJson } from '@tablemere/iceberg';
import { type InferredType, inferValueType, widen } from './infer-stand-in.ts';

/** A field the roll's rows carry and the table lacks, with the type its values imply. */
interface Found {
  parent: string[];
  name: string;
  type: InferredType | undefined;
}

/**
 * The columns to add for the fields of `rows` (JSON texts) that the schema lacks, top level or
 * nested (in a struct, a list's element struct, a map's value struct), in the order the rows
 * first carry them. A field's type is what all its values imply together (long and double
 * make double, structs take every field seen); where they disagree, the first value's type
 * wins and the rows that do not fit it are rejected by validation. A field whose values imply
 * no type (null, [], {}) is not added.
 */
export function planNewColumns(schema: SchemaJson, rows: Iterable<string>): NewColumn[] {
  const fields = schemaFromJson(schema).fields;
  const found = new Map<string, Found>();
  const note = (parent: string[], name: string, value: unknown) => {
    const key = JSON.stringify([...parent, name]);
    const entry = found.get(key);
    if (entry === undefined) found.set(key, { parent, name, type: inferValueType(value) });
    else entry.type = widen(entry.type, inferValueType(value));
  };
  for (const text of rows) {
    let row: unknown;
    try {
      row = JSON.parse(text);
    } catch {
      continue;
    }
    walkStruct(fields, row, [], note);
  }
  const columns: NewColumn[] = [];
  for (const { parent, name, type } of found.values()) {
    if (type !== undefined) columns.push({ name, parent, type: icebergType(type) });
  }
  return columns;
}

type Note = (parent: string[], name: string, value: unknown) => void;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function walkStruct(fields: readonly NestedField[], value: unknown, path: string[], note: Note): void {
  if (!isObject(value)) return;
  for (const [name, item] of Object.entries(value)) {
    const field = fields.find((f) => f.name === name);
    if (field === undefined) note(path, name, item);
    else walkType(field.type, item, [...path, name], note);
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

/** The Iceberg type of an inferred one; ids are placeholders the schema change assigns. */
function icebergType(type: InferredType): IcebergType {
  if (typeof type === 'string') return { kind: type };
  if (type.type === 'list') return { kind: 'list', elementId: 0, elementRequired: false, element: icebergType(type.element) };
  return { kind: 'struct', fields: type.fields.map((f) => ({ id: 0, name: f.name, required: false, type: icebergType(f.type) })) };
}

/** `address.city` for a column added in `address`: how reject paths name it, list indexes left out. */
export function addedPaths(columns: readonly NewColumn[]): string[] {
  return columns.map(columnPath);
}
