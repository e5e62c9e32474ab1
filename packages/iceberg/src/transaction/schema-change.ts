import type { RestCatalog } from '../catalog/rest/client.ts';
import type { LoadTableResult, TableIdent, TableRequirement, TableUpdate } from '../catalog/rest/types.ts';
import { isIcebergError } from '../errors.ts';
import { currentSchema, type TableMetadata } from '../spec/metadata.ts';
import { addColumns, hasColumn, type NewColumn } from './schema-fields.ts';

export type { NewColumn } from './schema-fields.ts';

export interface SchemaChange {
  /** Optional columns appended after the existing ones (of the table or of a struct in it), with ids from last-column-id + 1. */
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
  const requirements: TableRequirement[] = [{ type: 'assert-table-uuid', uuid: base['table-uuid'] }];
  const updates: TableUpdate[] = [];
  if (columns.length > 0) {
    const lastColumnId = base['last-column-id'];
    const added = addColumns(schema, lastColumnId, columns);
    const nextSchemaId = Math.max(...base.schemas.map((s) => s['schema-id'])) + 1;
    requirements.push(
      { type: 'assert-current-schema-id', 'current-schema-id': schema['schema-id'] },
      { type: 'assert-last-assigned-field-id', 'last-assigned-field-id': lastColumnId },
    );
    updates.push(
      {
        action: 'add-schema',
        schema: { ...schema, 'schema-id': nextSchemaId, fields: added.fields },
        'last-column-id': added.lastColumnId,
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

function isApplied(metadata: TableMetadata, columns: NewColumn[], properties: Record<string, string>): boolean {
  const schema = currentSchema(metadata);
  const hasColumns = columns.every((c) => hasColumn(schema, c));
  const hasProperties = Object.entries(properties).every(([k, v]) => metadata.properties?.[k] === v);
  return hasColumns && hasProperties;
}
