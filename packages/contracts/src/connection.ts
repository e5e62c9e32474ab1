import { z } from 'zod';
import { CatalogAuthType } from './warehouses.ts';
import { WarehouseName } from './names.ts';

/**
 * How to read a sink's rejects files from the store, `{sink_id}` to fill in: DuckDB SQL
 * (with the S3 secret of the DuckDB snippet) and Python (pyarrow's S3 filesystem).
 */
export const SinkRejectsRecipe = z.object({
  /** `s3://<bucket>/_sink/{sink_id}/rejects/*.ndjson` */
  location: z.string(),
  /**
   * `warehouse`: the warehouse's S3 credentials read it (its sink_bucket). `platform`: the files
   * are in the platform's intake bucket (the warehouse is a table bucket), which the
   * warehouse's credentials may not reach; GET /v1/sinks/{id}/rejects serves them then.
   */
  credentials: z.enum(['warehouse', 'platform']),
  duckdb: z.string(),
  python: z.string(),
});
export type SinkRejectsRecipe = z.infer<typeof SinkRejectsRecipe>;

export const ConnectionQuery = z.strictObject({ warehouse: WarehouseName.optional() });

/** What an engine needs to reach a warehouse's catalog and files; never a secret. */
export const Connection = z.object({
  api_url: z.string(),
  warehouse: z.object({
    name: z.string(),
    rest_uri: z.string(),
    warehouse: z.string(),
    /** The route prefix the catalog's `/v1/config` answers; null when it sets none. */
    prefix: z.string().nullable(),
    auth: z.object({ type: CatalogAuthType }),
    s3: z.object({ endpoint: z.string(), region: z.string(), path_style: z.literal(true) }),
  }),
  /** Present only while sinks are enabled: how producers without an engine write to a table. */
  sinks_note: z.string().optional(),
  /** `<api_url>/v1/sinks/{sink_id}`: the send route, `{sink_id}` to fill in; only while sinks are enabled. */
  ingest_url: z.string().optional(),
  /** Only while sinks are enabled. */
  sink_rejects: SinkRejectsRecipe.optional(),
});
export type Connection = z.infer<typeof Connection>;
