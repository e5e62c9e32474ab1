import { changeSchema, columnPath, currentSchema, describeType, type NewColumn, type TableMetadata } from '@tablemere/iceberg';
import { toRollError } from '../errors.ts';
import { checkpoint, type RollContext } from './context.ts';
import { planNewColumns } from './new-fields.ts';
import type { TenantTable } from './reload.ts';

/** The table after the roll's schema commit, and the columns the roll added (as reject paths name them). */
export interface AddedColumns {
  metadata: TableMetadata;
  columns: Array<{ path: string; type: string }>;
}

/**
 * Step 5b, add columns (sinks with `unknown_fields: add_columns`): one schema commit, through the
 * commit driver, adding as optional columns every field of `unknownRows` (the rows validation
 * rejected as unknown_field) that the schema lacks, before anything is written for the append.
 * It is guarded by the schema id and last column id it was planned on: when the owner (or
 * anyone) changed the schema meanwhile it loses (409) and is planned again on the new schema,
 * where a column the owner added under a field's name is left as it is (rows must fit it).
 * A lost answer is settled by a reload (the columns in place count as added). Nothing else of
 * the roll is durable yet: a roll that dies after this commit leaves columns the next roll
 * finds in the schema, so it adds nothing twice and takes every row.
 */
export async function addNewColumns(ctx: RollContext, table: TenantTable, base: TableMetadata, unknownRows: readonly string[]): Promise<AddedColumns> {
  let result;
  try {
    result = await changeSchema({
      catalog: table.catalog,
      table: table.ident,
      base: { metadata: base },
      plan: (metadata) => {
        checkpoint(ctx);
        ctx.lease.assertHeld(ctx.deps.settings.leaseMarginMs);
        const columns = planNewColumns(currentSchema(metadata), unknownRows);
        return columns.length === 0 ? undefined : { addColumns: columns };
      },
      onRetry: ({ attempt, error, delayMs }) => {
        ctx.log.info({ attempt, kind: error.kind, delay_ms: delayMs }, 'the table schema changed before the new columns were added; deciding again');
      },
    });
  } catch (error) {
    throw toRollError(error, 'catalog');
  }
  const columns = (result.change?.addColumns ?? []).map((c: NewColumn) => ({ path: columnPath(c), type: typeof c.type === 'string' ? c.type : describeType(c.type) }));
  if (columns.length > 0) {
    ctx.log.info({ columns, schema_id: result.metadata['current-schema-id'] }, 'added columns for the new fields of the rows');
    ctx.deps.crash.reached('after-schema-commit');
  }
  return { metadata: result.metadata, columns };
}
