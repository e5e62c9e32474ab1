import { z } from 'zod';
import { CatalogAuthType } from './warehouses.ts';
import { WarehouseName } from './names.ts';

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
});
export type Connection = z.infer<typeof Connection>;
