import { bindPartitionSpec, type DataFile, defaultPartitionSpec, type SchemaJson, schemaFromJson, splitByPartition, writeDataFile } from '@tablemere/iceberg';
import type { Table } from 'apache-arrow';
import { toRollError } from '../errors.ts';
import { checkpoint, type RollContext } from './context.ts';
import type { TenantTable } from './reload.ts';

/**
 * Step 7, write: the roll's rows as Parquet data files under the table's `data/`, with the
 * Iceberg field ids of `schema` (the one the rows were validated against) and exact metrics,
 * written with the tenant's storage access. One file, or one per partition when the table is
 * partitioned (by its owner, or by the sink's first roll; its current default spec; files of
 * earlier specs stay as they are until upkeep rewrites them under it).
 */
export async function writeData(ctx: RollContext, table: TenantTable, rows: Table, schema: SchemaJson): Promise<DataFile[]> {
  checkpoint(ctx);
  try {
    const tableSchema = schemaFromJson(schema);
    const spec = bindPartitionSpec(defaultPartitionSpec(table.loaded.metadata), tableSchema);
    const parts = spec.fields.length === 0 ? [{ table: rows, partition: undefined }] : splitByPartition(rows, spec).map((p) => ({ table: p.table, partition: p }));
    return await Promise.all(
      parts.map((part) =>
        writeDataFile({
          io: table.io,
          tableLocation: table.loaded.metadata.location,
          table: part.table,
          parquet: { schema: tableSchema },
          ...(part.partition ? { partition: part.partition } : {}),
        }),
      ),
    );
  } catch (error) {
    throw toRollError(error, 'table_storage');
  }
}
