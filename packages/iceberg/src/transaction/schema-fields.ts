import { IcebergError } from '../errors.ts';
import type { SchemaJson } from '../spec/metadata.ts';
import { typeToJson } from '../spec/schema.ts';
import { type IcebergType, type NestedField, parseTypeString } from '../spec/types.ts';

/** A column added by a schema change: optional, with fresh field ids. */
export interface NewColumn {
  name: string;
  /**
   * A primitive type string (`timestamptz`, `decimal(10,2)`, `fixed[16]`, ...) or any type,
   * nested ones included; the ids inside a given type are ignored and assigned afresh.
   */
  type: string | IcebergType;
  /**
   * Where it goes: the names of the fields from the top level down to the struct that gets it
   * (absent or empty: a top-level column). A list field's name leads to its element struct, a
   * map field's to its value struct, as Iceberg's own `add_column(("items", "x"), ...)` does.
   */
  parent?: readonly string[];
  doc?: string;
}

type JsonObject = Record<string, unknown>;

/**
 * The schema with `columns` added, as Iceberg's UpdateSchema adds them: each column's id is the
 * next after `lastColumnId`, then the ids of its nested fields, level by level (a struct's fields
 * before their children); nothing existing changes. Throws `already_exists` for a name its
 * parent struct has and `not_found` for a parent that is not a struct (or a list or map of one).
 */
export function addColumns(schema: SchemaJson, lastColumnId: number, columns: readonly NewColumn[]): { fields: SchemaJson['fields']; lastColumnId: number } {
  // A deep copy: the catalog's metadata object is left as it was loaded.
  const root = structuredClone({ fields: schema.fields }) as unknown as { fields: JsonObject[] };
  let next = lastColumnId;
  const assign = () => ++next;
  for (const column of columns) {
    const fields = parentFields(root, column.parent ?? []);
    if (fields === undefined) throw new IcebergError('not_found', `cannot add ${columnPath(column)}: ${(column.parent ?? []).join('.')} is not a struct`);
    if (fields.some((f) => f.name === column.name)) throw new IcebergError('already_exists', `column ${columnPath(column)} already exists`);
    const id = assign();
    const type = typeof column.type === 'string' ? canonicalType(column.type) : freshIds(column.type, assign);
    fields.push({ id, name: column.name, required: false, type: typeToJson(type), ...(column.doc === undefined ? {} : { doc: column.doc }) });
  }
  return { fields: root.fields as unknown as SchemaJson['fields'], lastColumnId: next };
}

/** Whether the schema has a field of that name in that parent: a column of the change is in place. */
export function hasColumn(schema: SchemaJson, column: Pick<NewColumn, 'name' | 'parent'>): boolean {
  const fields = parentFields(schema as unknown as { fields: JsonObject[] }, column.parent ?? []);
  return fields?.some((f) => f.name === column.name && f.required === false) ?? false;
}

/** The dotted name of a column (`address.zip`). */
export function columnPath(column: Pick<NewColumn, 'name' | 'parent'>): string {
  return [...(column.parent ?? []), column.name].join('.');
}

/** The fields array of the struct at `path` (lists and maps stepped through to their element or value). */
function parentFields(root: { fields: JsonObject[] }, path: readonly string[]): JsonObject[] | undefined {
  let fields: JsonObject[] = root.fields;
  for (const name of path) {
    const field = fields.find((f) => f.name === name);
    const struct = field === undefined ? undefined : structOf(field.type);
    if (struct === undefined) return undefined;
    fields = struct;
  }
  return fields;
}

function structOf(type: unknown): JsonObject[] | undefined {
  if (typeof type !== 'object' || type === null) return undefined;
  const object = type as JsonObject;
  if (object.type === 'struct') return object.fields as JsonObject[];
  if (object.type === 'list') return structOf(object.element);
  if (object.type === 'map') return structOf(object.value);
  return undefined;
}

function canonicalType(text: string): IcebergType {
  // Through the type parser so a malformed type fails here, not on the server.
  const type = parseTypeString(text);
  if (type.kind === 'unsupported') throw new IcebergError('unsupported', `cannot add a column of type ${type.name}`);
  return type;
}

/** `type` with new ids from `assign`: a struct's fields first, then what is inside each (Java's AssignFreshIds). */
function freshIds(type: IcebergType, assign: () => number): IcebergType {
  switch (type.kind) {
    case 'struct': {
      const ids = type.fields.map(() => assign());
      return { kind: 'struct', fields: type.fields.map((f, i): NestedField => ({ ...f, id: ids[i]!, required: false, type: freshIds(f.type, assign) })) };
    }
    case 'list': {
      const elementId = assign();
      return { ...type, elementId, elementRequired: false, element: freshIds(type.element, assign) };
    }
    case 'map': {
      const keyId = assign();
      const valueId = assign();
      return { ...type, keyId, valueId, valueRequired: false, key: freshIds(type.key, assign), value: freshIds(type.value, assign) };
    }
    case 'unsupported':
      throw new IcebergError('unsupported', `cannot add a column of type ${type.name}`);
    default:
      return type;
  }
}
