import { z } from 'zod';
import { CreateTableRequest, CreatedTable } from './tables.ts';

/** The column the roller adds at a sink's first roll and fills with each batch's received time. */
export const INGEST_TS_COLUMN = '__ingest_ts';

/** Sample rows a sink's table may be inferred from, at most (and the request's 1 MiB body limit). */
export const INFER_SAMPLE_MAX_ROWS = 1000;

/**
 * `create_table` of POST /v1/sinks: the sink's table is created in the same request, with
 * `columns` as the table create route takes them, or with the columns inferred from
 * `infer_from` (sample rows: used for inference only, never stored or sent to the table).
 */
export const SinkTableRequest = z
  .strictObject({
    columns: CreateTableRequest.shape.columns.optional(),
    infer_from: z.array(z.record(z.string(), z.unknown())).min(1).max(INFER_SAMPLE_MAX_ROWS).optional(),
  })
  .refine((spec) => (spec.columns === undefined) !== (spec.infer_from === undefined), 'give either columns or infer_from (sample rows), not both');
export type SinkTableRequest = z.infer<typeof SinkTableRequest>;

/** The table a sink create made, in its answer. */
export const SinkCreatedTable = CreatedTable.extend({
  /** The columns came from `infer_from`. */
  inferred: z.boolean(),
});
export type SinkCreatedTable = z.infer<typeof SinkCreatedTable>;
