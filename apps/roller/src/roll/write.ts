import { type DataFile, type SchemaJson, schemaFromJson, writeDataFile } from '@tablemere/iceberg';
import type { Table } from 'apache-arrow';
import { toRollError } from '../errors.ts';
import { checkpoint, type RollContext } from './context.ts';
import type { TenantTable } from './reload.ts';

/**
 * Step 7, write: the roll's rows as one Parquet data file under the table's `data/`, with the
 * Iceberg field ids of `schema` (the one the rows were validated against) and exact metrics,
 * written with the tenant's storage access.
 */
export async function writeData(ctx: RollContext, table: TenantTable, rows: Table, schema: SchemaJson): Promise<DataFile> {
  checkpoint(ctx);
  try {
    return await writeDataFile({
      io: table.io,
      tableLocation: table.loaded.metadata.location,
      table: rows,
      parquet: { schema: schemaFromJson(schema) },
    });
  } catch (error) {
    throw toRollError(error, 'table_storage');
  }
}
