import { changeSchema, currentSchema, type SchemaChange, type TableMetadata } from '@tablemere/iceberg';
import { toRollError } from '../errors.ts';
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
 */
export function firstRollChange(metadata: TableMetadata): SchemaChange | undefined {
  const hasColumn = currentSchema(metadata).fields.some((f) => f.name === INGEST_TS);
  const properties = Object.fromEntries(Object.entries(FIRST_ROLL_PROPERTIES).filter(([k]) => metadata.properties?.[k] === undefined));
  if (hasColumn && Object.keys(properties).length === 0) return undefined;
  return {
    ...(hasColumn ? {} : { addColumns: [{ name: INGEST_TS, type: 'timestamptz', doc: 'when the intake received the row' }] }),
    ...(Object.keys(properties).length > 0 ? { setProperties: properties } : {}),
  };
}

/**
 * Step 3, first roll: adds the optional `__ingest_ts timestamptz` column and the metadata
 * retention properties the table lacks, in one commit through the commit driver; a table that
 * has the column and both properties is left alone, and properties it has keep their values (a
 * column of that name with another type is kept, and then not filled). A concurrent change of
 * the schema loses the race cleanly (409) and is planned again on the new table.
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
        return firstRollChange(metadata);
      },
    });
  } catch (error) {
    throw toRollError(error, 'catalog');
  }
  const { change } = result;
  if (change === undefined) return result.metadata === table.loaded.metadata ? table : refreshTable(table);
  ctx.log.info({ added_column: change.addColumns !== undefined, properties: Object.keys(change.setProperties ?? {}) }, 'first roll: table prepared for the sink');
  return refreshTable(table);
}
