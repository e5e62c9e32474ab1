import { columnPath, commitSchemaChange, describeType, isIcebergError, type NewColumn, type TableMetadata } from '@tablemere/iceberg';
import { toRollError } from '../errors.ts';
import { checkpoint, type RollContext } from './context.ts';
import type { TenantTable } from './reload.ts';

/** The outcome of adding a roll's new fields: the table as it is now, and whether the columns are ours. */
export type AddColumnsOutcome =
  | { kind: 'added'; metadata: TableMetadata; columns: Array<{ path: string; type: string }> }
  /** Another writer changed the schema first (409): decide again against `metadata`. */
  | { kind: 'raced'; metadata: TableMetadata };

/**
 * Step 5b, add columns (sinks with `unknown_fields: add_columns`): one schema commit adding every
 * new field the roll's rows carry as an optional column, before anything is written for the
 * append. It is planned on `base` and guarded by its schema id and last column id: when the
 * owner (or anyone) changed the schema meanwhile, the commit loses (409) and the roll validates
 * again against the new schema, where a column the owner added under that name is the one rows
 * must fit. An unknown outcome is settled by a reload (the columns in place count as added).
 * Nothing else of the roll is durable yet: a roll that dies after this commit leaves columns
 * the next roll finds in the schema, so it adds nothing twice and takes every row.
 */
export async function addNewColumns(ctx: RollContext, table: TenantTable, base: TableMetadata, columns: NewColumn[]): Promise<AddColumnsOutcome> {
  checkpoint(ctx);
  ctx.lease.assertHeld(ctx.deps.settings.leaseMarginMs);
  try {
    const loaded = await commitSchemaChange(table.catalog, table.ident, base, { addColumns: columns });
    const added = columns.map((c) => ({ path: columnPath(c), type: typeof c.type === 'string' ? c.type : describeType(c.type) }));
    ctx.log.info({ columns: added, schema_id: loaded.metadata['current-schema-id'] }, 'added columns for the new fields of the rows');
    ctx.deps.crash.reached('after-schema-commit');
    return { kind: 'added', metadata: loaded.metadata, columns: added };
  } catch (error) {
    if (!isIcebergError(error, 'commit_conflict')) throw toRollError(error, 'catalog');
    try {
      const metadata = (await table.catalog.loadTable(table.ident)).metadata;
      ctx.log.info({ schema_id: metadata['current-schema-id'] }, 'the table schema changed before the new columns were added; deciding again');
      return { kind: 'raced', metadata };
    } catch (reloadError) {
      throw toRollError(reloadError, 'catalog');
    }
  }
}
