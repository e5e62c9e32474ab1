import {
  type IcebergType,
  type ListType,
  type MapType,
  type NestedField,
  type StructType,
  parseTypeString,
  typeString,
} from './types.ts';

/**
 * A table schema (format v2) and its REST JSON shape:
 * `{"type": "struct", "schema-id": 0, "fields": [{"id", "name", "required", "type", "doc"?}]}`
 * with nested types `{"type": "list", "element-id", "element", "element-required"}` and
 * `{"type": "map", "key-id", "key", "value-id", "value", "value-required"}`.
 */
export interface Schema {
  readonly schemaId: number;
  readonly fields: readonly NestedField[];
  readonly identifierFieldIds: readonly number[];
}

/** Parses a schema from REST JSON (numbers may arrive as number or bigint). */
export function schemaFromJson(json: unknown): Schema {
  const object = asObject(json, 'schema');
  if (object.type !== undefined && object.type !== 'struct') throw malformed('schema', 'type must be "struct"');
  const identifiers = object['identifier-field-ids'];
  return {
    schemaId: object['schema-id'] === undefined ? 0 : asInt(object['schema-id'], 'schema-id'),
    fields: fieldsFromJson(object.fields, 'schema'),
    identifierFieldIds:
      identifiers === undefined || identifiers === null
        ? []
        : asArray(identifiers, 'identifier-field-ids').map((id) => asInt(id, 'identifier-field-ids')),
  };
}

/** The REST JSON of a schema, as `schemaFromJson` reads it. */
export function schemaToJson(schema: Schema): Record<string, unknown> {
  return {
    type: 'struct',
    'schema-id': schema.schemaId,
    fields: schema.fields.map(fieldToJson),
    'identifier-field-ids': [...schema.identifierFieldIds],
  };
}

export function typeFromJson(json: unknown, where = 'type'): IcebergType {
  if (typeof json === 'string') {
    try {
      return parseTypeString(json);
    } catch (error) {
      throw malformed(where, (error as Error).message);
    }
  }
  const object = asObject(json, where);
  switch (object.type) {
    case 'struct':
      return { kind: 'struct', fields: fieldsFromJson(object.fields, where) };
    case 'list':
      return {
        kind: 'list',
        elementId: asInt(object['element-id'], `${where}.element-id`),
        elementRequired: asBoolean(object['element-required'], `${where}.element-required`),
        element: typeFromJson(object.element, `${where}.element`),
      };
    case 'map':
      return {
        kind: 'map',
        keyId: asInt(object['key-id'], `${where}.key-id`),
        key: typeFromJson(object.key, `${where}.key`),
        valueId: asInt(object['value-id'], `${where}.value-id`),
        valueRequired: asBoolean(object['value-required'], `${where}.value-required`),
        value: typeFromJson(object.value, `${where}.value`),
      };
    default:
      throw malformed(where, `unknown type ${JSON.stringify(object.type)}`);
  }
}

export function typeToJson(type: IcebergType): unknown {
  switch (type.kind) {
    case 'struct':
      return { type: 'struct', fields: type.fields.map(fieldToJson) };
    case 'list':
      return listToJson(type);
    case 'map':
      return mapToJson(type);
    case 'unsupported':
      return type.json;
    default:
      return typeString(type);
  }
}

/** Every field of the schema by id, nested fields (struct children, list elements, map keys and values) included. */
export function indexById(schema: Schema | StructType): Map<number, NestedField> {
  const index = new Map<number, NestedField>();
  const visitType = (type: IcebergType): void => {
    if (type.kind === 'struct') type.fields.forEach(visitField);
    else if (type.kind === 'list') visitField({ id: type.elementId, name: 'element', required: type.elementRequired, type: type.element });
    else if (type.kind === 'map') {
      visitField({ id: type.keyId, name: 'key', required: true, type: type.key });
      visitField({ id: type.valueId, name: 'value', required: type.valueRequired, type: type.value });
    }
  };
  const visitField = (field: NestedField): void => {
    index.set(field.id, field);
    visitType(field.type);
  };
  schema.fields.forEach(visitField);
  return index;
}

/** The highest field id in use, what `last-column-id` must be at least. */
export function highestFieldId(schema: Schema): number {
  let highest = 0;
  for (const id of indexById(schema).keys()) highest = Math.max(highest, id);
  return highest;
}

function fieldsFromJson(json: unknown, where: string): NestedField[] {
  return asArray(json, `${where}.fields`).map((item, i) => {
    const object = asObject(item, `${where}.fields[${i}]`);
    const name = object.name;
    if (typeof name !== 'string' || name === '') throw malformed(`${where}.fields[${i}]`, 'name must be a non-empty string');
    const at = `${where}.${name}`;
    return {
      id: asInt(object.id, `${at}.id`),
      name,
      required: asBoolean(object.required, `${at}.required`),
      type: typeFromJson(object.type, at),
      ...(typeof object.doc === 'string' ? { doc: object.doc } : {}),
      ...(object['initial-default'] !== undefined ? { initialDefault: object['initial-default'] } : {}),
      ...(object['write-default'] !== undefined ? { writeDefault: object['write-default'] } : {}),
    };
  });
}

function fieldToJson(field: NestedField): Record<string, unknown> {
  const json: Record<string, unknown> = {
    id: field.id,
    name: field.name,
    required: field.required,
    type: typeToJson(field.type),
  };
  if (field.doc !== undefined) json.doc = field.doc;
  if (field.initialDefault !== undefined) json['initial-default'] = field.initialDefault;
  if (field.writeDefault !== undefined) json['write-default'] = field.writeDefault;
  return json;
}

function listToJson(type: ListType): Record<string, unknown> {
  return {
    type: 'list',
    'element-id': type.elementId,
    element: typeToJson(type.element),
    'element-required': type.elementRequired,
  };
}

function mapToJson(type: MapType): Record<string, unknown> {
  return {
    type: 'map',
    'key-id': type.keyId,
    key: typeToJson(type.key),
    'value-id': type.valueId,
    value: typeToJson(type.value),
    'value-required': type.valueRequired,
  };
}

function asObject(value: unknown, where: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw malformed(where, 'expected an object');
  return value as Record<string, unknown>;
}

function asArray(value: unknown, where: string): unknown[] {
  if (!Array.isArray(value)) throw malformed(where, 'expected an array');
  return value;
}

function asBoolean(value: unknown, where: string): boolean {
  if (typeof value !== 'boolean') throw malformed(where, 'expected true or false');
  return value;
}

/** Ids are small integers; a lossless parser may still hand them over as bigint. */
function asInt(value: unknown, where: string): number {
  const n = typeof value === 'bigint' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n)) throw malformed(where, 'expected an integer');
  return n;
}

/** A malformed schema is broken catalog data, not a condition callers branch on. */
function malformed(where: string, why: string): TypeError {
  return new TypeError(`invalid Iceberg schema at ${where}: ${why}`);
}
