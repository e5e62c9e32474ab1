import type { RestCatalog } from '../catalog/rest/client.ts';
import type { LoadTableResult, TableIdent, TableRequirement, TableUpdate } from '../catalog/rest/types.ts';
import { IcebergError, isIcebergError } from '../errors.ts';
import { currentSchema, type TableMetadata } from '../spec/metadata.ts';
import { parseTypeString, typeString } from '../spec/types.ts';

export interface NewColumn {
  name: string;
  /** A primitive type string: `timestamptz`, `decimal(10,2)`, `fixed[16]`, ... */
  type: string;
  doc?: string;
}

export interface SchemaChange {
  /** Optional columns appended after the existing ones, with ids from last-column-id + 1. */
  addColumns?: NewColumn[];
  setProperties?: Record<string, string>;
}

/**
 * Commits a schema change against `base`: new optional columns and table properties, guarded
 * by the schema id and last assigned field id it was planned on, so a concurrent schema change
 * fails with `commit_conflict` instead of being overwritten. Returns the reloaded table.
 * When the outcome is unknown, a reload that shows the change in place counts as success.
 */
export async function commitSchemaChange(
  catalog: RestCatalog,
  table: TableIdent,
  base: TableMetadata,
  change: SchemaChange,
): Promise<LoadTableResult> {
  const columns = change.addColumns ?? [];
  const properties = change.setProperties ?? {};
  const schema = currentSchema(base);
  for (const column of columns) {
    if (schema.fields.some((f) => f.name === column.name)) {
      throw new IcebergError('already_exists', `column ${column.name} already exists in ${table.name}`);
    }
  }
  const requirements: TableRequirement[] = [{ type: 'assert-table-uuid', uuid: base['table-uuid'] }];
  const updates: TableUpdate[] = [];
  if (columns.length > 0) {
    const lastColumnId = base['last-column-id'];
    const added = columns.map((column, i) => ({
      id: lastColumnId + 1 + i,
      name: column.name,
      required: false,
      // Normalised through the type parser so a malformed type fails here, not on the server.
      type: canonicalType(column.type),
      ...(column.doc === undefined ? {} : { doc: column.doc }),
    }));
    const nextSchemaId = Math.max(...base.schemas.map((s) => s['schema-id'])) + 1;
    requirements.push(
      { type: 'assert-current-schema-id', 'current-schema-id': schema['schema-id'] },
      { type: 'assert-last-assigned-field-id', 'last-assigned-field-id': lastColumnId },
    );
    updates.push(
      {
        action: 'add-schema',
        schema: { ...schema, 'schema-id': nextSchemaId, fields: [...schema.fields, ...added] },
        'last-column-id': lastColumnId + columns.length,
      },
      // -1 selects the schema added by this commit.
      { action: 'set-current-schema', 'schema-id': -1 },
    );
  }
  if (Object.keys(properties).length > 0) updates.push({ action: 'set-properties', updates: properties });
  if (updates.length === 0) return catalog.loadTable(table);

  try {
    await catalog.commitTable(table, { requirements, updates });
  } catch (error) {
    if (!isIcebergError(error, 'commit_state_unknown')) throw error;
    const reloaded = await catalog.loadTable(table);
    if (isApplied(reloaded.metadata, columns, properties)) return reloaded;
    throw error;
  }
  return catalog.loadTable(table);
}

function canonicalType(text: string): string {
  const type = parseTypeString(text);
  if (type.kind === 'unsupported') throw new IcebergError('unsupported', `cannot add a column of type ${type.name}`);
  return typeString(type);
}

function isApplied(metadata: TableMetadata, columns: NewColumn[], properties: Record<string, string>): boolean {
  const fields = currentSchema(metadata).fields;
  const hasColumns = columns.every((c) => fields.some((f) => f.name === c.name && !f.required));
  const hasProperties = Object.entries(properties).every(([k, v]) => metadata.properties?.[k] === v);
  return hasColumns && hasProperties;
}
