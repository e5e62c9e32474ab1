import type { CreatedTable, SchemaField } from '@tablemere/contracts';
import { columns } from './output.ts';

/** A created table for people: where it is and its columns, nested types written out. */
export function tableLines(created: CreatedTable, title = `created ${created.table} in warehouse ${created.warehouse}`): string[] {
  return [
    `${title} (Iceberg format v${created.format_version})`,
    `location ${created.location}`,
    'columns:',
    ...columns(created.schema.fields.map(fieldRow), '  '),
  ];
}

function fieldRow(field: SchemaField): string[] {
  return [String(field.id), field.name, typeText(field.type), field.required ? 'required' : 'optional'];
}

/** `long`, `list<string>`, `struct<lat: double, lon: double>`, `map<string, long>` from the catalog's JSON. */
export function typeText(type: unknown): string {
  if (typeof type === 'string') return type;
  const nested = type as { type?: string; fields?: Array<{ name: string; type: unknown }>; element?: unknown; key?: unknown; value?: unknown };
  switch (nested.type) {
    case 'struct':
      return `struct<${(nested.fields ?? []).map((f) => `${f.name}: ${typeText(f.type)}`).join(', ')}>`;
    case 'list':
      return `list<${typeText(nested.element)}>`;
    case 'map':
      return `map<${typeText(nested.key)}, ${typeText(nested.value)}>`;
    default:
      return String(nested.type);
  }
}
