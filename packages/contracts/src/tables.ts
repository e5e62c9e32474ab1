import { z } from 'zod';
import { IcebergPrimitiveType, IcebergTypeJson } from './iceberg-types.ts';
import { ColumnName, IcebergName, WarehouseName } from './names.ts';

export const Column = z.strictObject({
  name: ColumnName,
  type: IcebergPrimitiveType,
  required: z.boolean().optional(),
});
export type ColumnInput = z.input<typeof Column>;

/** Columns a created table may have, at most. */
export const MAX_TABLE_COLUMNS = 1000;

export const CreateTableRequest = z.strictObject({
  namespace: IcebergName,
  name: IcebergName,
  columns: z
    .array(Column)
    .min(1)
    .max(MAX_TABLE_COLUMNS)
    .superRefine((columns, ctx) => {
      // Engines such as Spark and DuckDB resolve names case-insensitively: `x` and `X` would clash.
      const seen = new Set<string>();
      columns.forEach((column, index) => {
        const key = column.name.toLowerCase();
        if (seen.has(key)) ctx.addIssue({ code: 'custom', message: `column "${column.name}" is given twice`, path: [index, 'name'] });
        seen.add(key);
      });
    }),
});
export type CreateTableRequest = z.infer<typeof CreateTableRequest>;
export type CreateTableInput = z.input<typeof CreateTableRequest>;

export const SchemaField = z.object({
  id: z.number().int(),
  name: z.string(),
  type: IcebergTypeJson,
  required: z.boolean(),
});
export type SchemaField = z.infer<typeof SchemaField>;

export const CreatedTable = z.object({
  warehouse: z.string(),
  namespace: z.string(),
  name: z.string(),
  /** `<namespace>.<name>` */
  table: z.string(),
  format_version: z.number().int(),
  location: z.string(),
  schema: z.object({ schema_id: z.number().int(), fields: z.array(SchemaField) }),
});
export type CreatedTable = z.infer<typeof CreatedTable>;

export const TableRef = z.object({ namespace: z.string(), name: z.string(), table: z.string() });
export type TableRef = z.infer<typeof TableRef>;

export const TableList = z.object({ tables: z.array(TableRef) });
export type TableList = z.infer<typeof TableList>;

export const TableListQuery = z.strictObject({ namespace: IcebergName.optional() });

/** `<namespace>.<name>`, as in `table` fields and `{table}` path segments. */
export const QualifiedTableName = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_]*\.[a-z0-9][a-z0-9_]*$/, 'write the table as <namespace>.<name>, e.g. garden.events')
  .transform((text) => {
    const [namespace = '', name = ''] = text.split('.');
    return { namespace, name };
  });

export const TableParams = z.strictObject({ warehouse: WarehouseName, table: QualifiedTableName });
