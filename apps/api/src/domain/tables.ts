import {
  formatIcebergPrimitive,
  parseIcebergPrimitive,
  type ColumnInput,
  type CreatedTable,
  type CreateTableRequest,
  type NewFieldJson,
  type SchemaField,
  type TableRef,
} from '@tablemere/contracts';
import { currentSchema, isIcebergError, type RestCatalog, type TableMetadata } from '@tablemere/iceberg';
import { apiError, tableNotFound } from '../errors.ts';

/** Tables are created as format v2, the version the append path writes. */
const FORMAT_VERSION = '2';

const qualified = (namespace: string, name: string) => `${namespace}.${name}`;

/** Primitive types in the spec's canonical spelling (catalogs differ: `decimal(10, 2)`); nested types as given. */
function fieldType(type: unknown): SchemaField['type'] {
  if (typeof type !== 'string') return type as SchemaField['type'];
  const parsed = parseIcebergPrimitive(type);
  return parsed.ok ? formatIcebergPrimitive(parsed.type) : type;
}

export function describeTable(warehouse: string, namespace: string, name: string, metadata: TableMetadata): CreatedTable {
  const schema = currentSchema(metadata);
  return {
    warehouse,
    namespace,
    name,
    table: qualified(namespace, name),
    format_version: metadata['format-version'],
    location: metadata.location,
    schema: {
      schema_id: schema['schema-id'],
      fields: schema.fields.map((field) => ({
        id: field.id,
        name: field.name,
        type: fieldType(field.type),
        required: field.required,
      })),
    },
  };
}

/** The tables in a namespace, by name; empty when the namespace does not exist. */
async function namespaceTables(catalog: RestCatalog, namespace: string): Promise<TableRef[]> {
  try {
    const identifiers = await catalog.listTables(namespace);
    return identifiers
      .map((t) => ({ namespace, name: t.name, table: qualified(namespace, t.name) }))
      .sort((a, b) => a.name.localeCompare(b.name));
  } catch (error) {
    if (isIcebergError(error, 'not_found')) return [];
    throw error;
  }
}

/**
 * Creates an unpartitioned v2 table, and its namespace when missing. Field ids are sent as
 * 1..n but the catalog may reassign them: the answer shows the schema the catalog kept.
 */
export async function createTable(catalog: RestCatalog, warehouse: string, request: CreateTableRequest): Promise<CreatedTable> {
  const { namespace, name } = request;
  const created = await createCatalogTable(catalog, namespace, name, columnFields(request.columns));
  return describeTable(warehouse, namespace, name, created.metadata);
}

/** The table create route's columns as schema fields, ids 1..n. */
export function columnFields(columns: readonly ColumnInput[]): NewFieldJson[] {
  return columns.map((column, index) => ({ id: index + 1, name: column.name, type: column.type, required: column.required ?? false }));
}

export interface CatalogTableCreated {
  metadata: TableMetadata;
  /** The namespace did not exist before. */
  namespaceCreated: boolean;
}

/** An unpartitioned v2 table with these fields (nested ones too), and its namespace when missing; 409 table_exists. */
export async function createCatalogTable(catalog: RestCatalog, namespace: string, name: string, fields: NewFieldJson[]): Promise<CatalogTableCreated> {
  const namespaceCreated = await catalog.ensureNamespace(namespace);
  // Some catalogs (SeaweedFS) answer create with the existing table instead of 409: ask first.
  if (await catalog.tableExists({ namespace, name })) throw tableExists(namespace, name);
  try {
    const created = await catalog.createTable(namespace, name, {
      schema: { type: 'struct', fields },
      partitionSpec: { fields: [] },
      properties: { 'format-version': FORMAT_VERSION },
    });
    return { metadata: created.metadata, namespaceCreated };
  } catch (error) {
    if (isIcebergError(error, 'already_exists')) throw tableExists(namespace, name);
    throw error;
  }
}

function tableExists(namespace: string, name: string) {
  return apiError('table_exists', { details: { table: qualified(namespace, name) } });
}

/** A table's description; 404 table_not_found listing the namespace's tables otherwise. */
export async function getTable(catalog: RestCatalog, warehouse: string, namespace: string, name: string): Promise<CreatedTable> {
  try {
    const loaded = await catalog.loadTable({ namespace, name });
    return describeTable(warehouse, namespace, name, loaded.metadata);
  } catch (error) {
    if (isIcebergError(error, 'not_found')) {
      const tables = await namespaceTables(catalog, namespace);
      throw tableNotFound(qualified(namespace, name), tables.map((t) => t.table));
    }
    throw error;
  }
}

/** Tables of one namespace, or of every top-level namespace when none is given. */
export async function listTables(catalog: RestCatalog, namespace: string | undefined): Promise<TableRef[]> {
  const namespaces = namespace === undefined ? (await catalog.listNamespaces()).map((levels) => levels.join('.')) : [namespace];
  const refs: TableRef[] = [];
  for (const ns of namespaces.sort()) refs.push(...(await namespaceTables(catalog, ns)));
  return refs;
}
