import {
  changeSchema,
  currentSchema,
  defaultPartitionSpec,
  PartitionRequestError,
  parsePartitionField,
  type SchemaChange,
  type TableMetadata,
} from '@tablemere/iceberg';
import { RollError, toRollError } from '../errors.ts';
import { checkpoint, type RollContext } from './context.ts';
import { refreshTable, type TenantTable } from './reload.ts';
import { INGEST_TS } from './validate.ts';

/** Table properties every sink's table gets once: old metadata files are cleaned as commits pile up. */
export const FIRST_ROLL_PROPERTIES: Readonly<Record<string, string>> = {
  'write.metadata.delete-after-commit.enabled': 'true',
  'write.metadata.previous-versions-max': '5',
};

/**
 * What the first roll still has to change on this table; undefined when nothing. A property
 * the table already has is the owner's, whatever its value, and is never overwritten.
 * `partition` (the sink's, as given at create) becomes the default spec of a table that is
 * still unpartitioned, in the same commit as the column, so the first data files are already
 * partitioned; a table the owner partitioned keeps the owner's spec.
 */
export function firstRollChange(metadata: TableMetadata, partition: readonly string[] = []): SchemaChange | undefined {
  const hasColumn = currentSchema(metadata).fields.some((f) => f.name === INGEST_TS);
  const properties = Object.fromEntries(Object.entries(FIRST_ROLL_PROPERTIES).filter(([k]) => metadata.properties?.[k] === undefined));
  const partitionBy = partition.length > 0 && defaultPartitionSpec(metadata).fields.length === 0 ? partition.map(parsePartitionField) : undefined;
  if (hasColumn && Object.keys(properties).length === 0 && partitionBy === undefined) return undefined;
  return {
    ...(hasColumn ? {} : { addColumns: [{ name: INGEST_TS, type: 'timestamptz', doc: 'when the intake received the row' }] }),
    ...(Object.keys(properties).length > 0 ? { setProperties: properties } : {}),
    ...(partitionBy === undefined ? {} : { partitionBy }),
  };
}

/**
 * The partition the roll still applies: the sink's until it has rolled once. Later an
 * unpartitioned table is the owner's choice (an engine removed the spec), not left to undo.
 */
function pendingPartition(ctx: RollContext): readonly string[] {
  return ctx.sink.last_roll_at === null ? ctx.sink.partition : [];
}

/**
 * Step 3, first roll: adds the optional `__ingest_ts timestamptz` column, the metadata
 * retention properties the table lacks and the sink's partition spec, in one commit through
 * the commit driver; a table that has the column and both properties is left alone, and
 * properties it has keep their values (a column of that name with another type is kept, and
 * then not filled). A concurrent change of the schema loses the race cleanly (409) and is
 * planned again on the new table.
 */
export async function applyFirstRoll(ctx: RollContext, table: TenantTable): Promise<TenantTable> {
  let result;
  try {
    result = await changeSchema({
      catalog: table.catalog,
      table: table.ident,
      base: table.loaded,
      plan: (metadata) => {
        checkpoint(ctx);
        return firstRollChange(metadata, pendingPartition(ctx));
      },
    });
  } catch (error) {
    if (error instanceof PartitionRequestError) {
      throw new RollError('table_unsupported', `the sink's partition no longer fits the table (${error.message}); partition the table with its engine, or delete and create the sink again`, { cause: error });
    }
    throw toRollError(error, 'catalog');
  }
  const { change } = result;
  if (change === undefined) return result.metadata === table.loaded.metadata ? table : refreshTable(table);
  const refreshed = await refreshTable(table);
  ctx.log.info(
    { added_column: change.addColumns !== undefined, properties: Object.keys(change.setProperties ?? {}), partition_spec_id: change.partitionBy ? refreshed.loaded.metadata['default-spec-id'] : undefined },
    'first roll: table prepared for the sink',
  );
  return refreshed;
}
