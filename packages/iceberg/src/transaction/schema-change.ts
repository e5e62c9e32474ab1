import type { RestCatalog } from '../catalog/rest/client.ts';
import type { LoadTableResult, TableIdent, TableRequirement, TableUpdate } from '../catalog/rest/types.ts';
import { IcebergError, isIcebergError } from '../errors.ts';
import { type PartitionFieldRequest, resolvePartitionFields, sameFields } from '../partition/request.ts';
import { currentSchema, defaultPartitionSpec, type PartitionField, type SchemaJson, type TableMetadata } from '../spec/metadata.ts';
import { schemaFromJson } from '../spec/schema.ts';
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
  /**
   * A new default partition spec, its sources resolved on the schema this change leaves (so a
   * column added by the same change can be one): the data files the next commits write are
   * partitioned by it, those already written keep the spec they were written for.
   */
  partitionBy?: readonly PartitionFieldRequest[];
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
  let newSchema: SchemaJson = schema;
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
    newSchema = { ...schema, 'schema-id': nextSchemaId, fields: [...schema.fields, ...added] };
    requirements.push(
      { type: 'assert-current-schema-id', 'current-schema-id': schema['schema-id'] },
      { type: 'assert-last-assigned-field-id', 'last-assigned-field-id': lastColumnId },
    );
    updates.push(
      { action: 'add-schema', schema: newSchema, 'last-column-id': lastColumnId + columns.length },
      // -1 selects the schema added by this commit.
      { action: 'set-current-schema', 'schema-id': -1 },
    );
  }
  // After the schema updates: the catalog binds a new spec to the current schema.
  const partitionFields = change.partitionBy === undefined ? undefined : newPartitionSpec(base, newSchema, change.partitionBy, requirements, updates);
  if (Object.keys(properties).length > 0) updates.push({ action: 'set-properties', updates: properties });
  if (updates.length === 0) return catalog.loadTable(table);

  try {
    await catalog.commitTable(table, { requirements, updates });
  } catch (error) {
    if (!isIcebergError(error, 'commit_state_unknown')) throw error;
    const reloaded = await catalog.loadTable(table);
    if (isApplied(reloaded.metadata, columns, properties, partitionFields)) return reloaded;
    throw error;
  }
  return catalog.loadTable(table);
}

function canonicalType(text: string): string {
  const type = parseTypeString(text);
  if (type.kind === 'unsupported') throw new IcebergError('unsupported', `cannot add a column of type ${type.name}`);
  return typeString(type);
}

/**
 * Adds the spec and makes it the default, guarded by the default spec and the last partition
 * field id it was planned on. Field ids follow the table's last one; the catalog numbers the spec.
 */
function newPartitionSpec(
  base: TableMetadata,
  schema: SchemaJson,
  partitionBy: readonly PartitionFieldRequest[],
  requirements: TableRequirement[],
  updates: TableUpdate[],
): PartitionField[] {
  const lastPartitionId = base['last-partition-id'] ?? Math.max(999, ...base['partition-specs'].flatMap((s) => s.fields.map((f) => f['field-id'])));
  const fields = resolvePartitionFields(partitionBy, schemaFromJson(schema), lastPartitionId);
  if (!requirements.some((r) => r.type === 'assert-current-schema-id')) {
    requirements.push({ type: 'assert-current-schema-id', 'current-schema-id': base['current-schema-id'] });
  }
  requirements.push(
    { type: 'assert-default-spec-id', 'default-spec-id': base['default-spec-id'] },
    { type: 'assert-last-assigned-partition-id', 'last-assigned-partition-id': lastPartitionId },
  );
  const nextSpecId = Math.max(...base['partition-specs'].map((s) => s['spec-id'])) + 1;
  // -1 selects the spec added by this commit.
  updates.push({ action: 'add-spec', spec: { 'spec-id': nextSpecId, fields } }, { action: 'set-default-spec', 'spec-id': -1 });
  return fields;
}

function isApplied(metadata: TableMetadata, columns: NewColumn[], properties: Record<string, string>, partitionFields: PartitionField[] | undefined): boolean {
  const fields = currentSchema(metadata).fields;
  const hasColumns = columns.every((c) => fields.some((f) => f.name === c.name && !f.required));
  const hasProperties = Object.entries(properties).every(([k, v]) => metadata.properties?.[k] === v);
  const hasSpec = partitionFields === undefined || sameFields(defaultPartitionSpec(metadata), partitionFields);
  return hasColumns && hasProperties && hasSpec;
}
