import type { RestCatalog } from '../catalog/rest/client.ts';
import type { LoadTableResult, TableIdent, TableRequirement, TableUpdate } from '../catalog/rest/types.ts';
import { type PartitionFieldRequest, resolvePartitionFields, sameFields } from '../partition/request.ts';
import { currentSchema, defaultPartitionSpec, type PartitionField, type SchemaJson, type TableMetadata } from '../spec/metadata.ts';
import { schemaFromJson } from '../spec/schema.ts';
import { type CommitAttempt, type CommitDriverOptions, commitWithRetries } from './commit-driver.ts';
import type { RetryPolicy } from './retry.ts';
import { addColumns, hasColumn, type NewColumn } from './schema-fields.ts';

export type { NewColumn } from './schema-fields.ts';

export interface SchemaChange {
  /** Optional columns appended after the existing ones (of the table or of a struct in it), with ids from last-column-id + 1. */
  addColumns?: NewColumn[];
  setProperties?: Record<string, string>;
  /**
   * A new default partition spec, its sources resolved on the schema this change leaves (so a
   * column added by the same change can be one): the data files the next commits write are
   * partitioned by it, those already written keep the spec they were written for.
   */
  partitionBy?: readonly PartitionFieldRequest[];
}

export interface SchemaChangeOptions {
  catalog: RestCatalog;
  table: TableIdent;
  /** The table as last loaded; loaded when omitted. */
  base?: Pick<LoadTableResult, 'metadata'>;
  /**
   * The change to make on the table as (re)loaded, decided again after every lost race (409):
   * another writer's schema change may have made part of it, or all of it, or made it wrong.
   * Undefined when there is nothing (left) to change.
   */
  plan: (metadata: TableMetadata) => SchemaChange | undefined;
  /** Attempts and backoff (the driver's default: 5 attempts, 0.5–8 s); `{ attempts: 1 }` fails on the first 409. */
  retry?: Partial<RetryPolicy>;
  /** Told about each failed attempt that will be planned and tried again. */
  onRetry?: CommitDriverOptions<SchemaChangeResult>['onRetry'];
}

export interface SchemaChangeResult {
  metadata: TableMetadata;
  /** The change that landed; undefined when the plan found nothing to change. */
  change: SchemaChange | undefined;
}

/**
 * Commits a planned schema change through the commit driver: new optional columns and table
 * properties, guarded by the schema id and last assigned field id it was planned on, so a
 * concurrent schema change is never overwritten: it loses (409), and the change is planned
 * again on the new table. After a lost answer, a reload showing the change in place counts as
 * landed.
 */
export async function changeSchema(options: SchemaChangeOptions): Promise<SchemaChangeResult> {
  return commitWithRetries<SchemaChangeResult>({
    catalog: options.catalog,
    table: options.table,
    operation: 'schema change',
    formatVersions: [1, 2, 3],
    ...(options.base ? { base: options.base } : {}),
    ...(options.retry ? { retry: options.retry } : {}),
    ...(options.onRetry ? { onRetry: options.onRetry } : {}),
    build: async ({ metadata }) => {
      const change = options.plan(metadata);
      if (change === undefined) return { nothingToDo: { metadata, change } };
      return schemaCommit(metadata, change);
    },
  });
}

/**
 * Commits `change` planned on `base`; a concurrent schema change fails it with
 * `commit_conflict`. Returns the reloaded table.
 */
export async function commitSchemaChange(catalog: RestCatalog, table: TableIdent, base: TableMetadata, change: SchemaChange): Promise<LoadTableResult> {
  await changeSchema({ catalog, table, base: { metadata: base }, plan: () => change, retry: { attempts: 1 } });
  return catalog.loadTable(table);
}

function schemaCommit(base: TableMetadata, change: SchemaChange): CommitAttempt<SchemaChangeResult> | { nothingToDo: SchemaChangeResult } {
  const columns = change.addColumns ?? [];
  const properties = change.setProperties ?? {};
  const schema = currentSchema(base);
  const requirements: TableRequirement[] = [];
  const updates: TableUpdate[] = [];
  let newSchema: SchemaJson = schema;
  if (columns.length > 0) {
    const lastColumnId = base['last-column-id'];
    const added = addColumns(schema, lastColumnId, columns);
    const nextSchemaId = Math.max(...base.schemas.map((s) => s['schema-id'])) + 1;
    newSchema = { ...schema, 'schema-id': nextSchemaId, fields: added.fields };
    requirements.push(
      { type: 'assert-current-schema-id', 'current-schema-id': schema['schema-id'] },
      { type: 'assert-last-assigned-field-id', 'last-assigned-field-id': lastColumnId },
    );
    updates.push(
      { action: 'add-schema', schema: newSchema, 'last-column-id': added.lastColumnId },
      // -1 selects the schema added by this commit.
      { action: 'set-current-schema', 'schema-id': -1 },
    );
  }
  // After the schema updates: the catalog binds a new spec to the current schema.
  const partitionFields = change.partitionBy === undefined ? undefined : newPartitionSpec(base, newSchema, change.partitionBy, requirements, updates);
  if (Object.keys(properties).length > 0) updates.push({ action: 'set-properties', updates: properties });
  if (updates.length === 0) return { nothingToDo: { metadata: base, change: undefined } };
  return {
    requirements,
    updates,
    landed: (metadata) => (isApplied(metadata, columns, properties, partitionFields) ? 'landed' : 'not_landed'),
    result: (metadata) => ({ metadata, change }),
  };
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
  const schema = currentSchema(metadata);
  const hasColumns = columns.every((c) => hasColumn(schema, c));
  const hasProperties = Object.entries(properties).every(([k, v]) => metadata.properties?.[k] === v);
  const hasSpec = partitionFields === undefined || sameFields(defaultPartitionSpec(metadata), partitionFields);
  return hasColumns && hasProperties && hasSpec;
}
