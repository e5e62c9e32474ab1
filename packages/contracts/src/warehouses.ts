import { z } from 'zod';
import { isStorableText, STORABLE_TEXT_MESSAGE, StorableText, Timestamp, WarehouseName } from './names.ts';

const Secret = StorableText.min(1).max(4096);
// A URL may still carry a NUL or a lone surrogate in its path or query.
const HttpUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).refine(isStorableText, STORABLE_TEXT_MESSAGE);
const Region = z.string().regex(/^[a-z0-9-]{1,32}$/, 'a region such as us-east-1');

/** How the platform authenticates to the catalog; the secrets in it are stored sealed. */
export const CatalogAuthInput = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('oauth2'),
    client_id: Secret,
    client_secret: Secret,
    scope: StorableText.min(1).max(256).optional(),
  }),
  z.strictObject({
    type: z.literal('sigv4'),
    access_key_id: Secret,
    secret_access_key: Secret,
    region: Region,
    service: z.string().regex(/^[a-z0-9-]{1,32}$/).optional(),
  }),
  z.strictObject({ type: z.literal('bearer'), token: Secret }),
  z.strictObject({ type: z.literal('none') }),
]);
export type CatalogAuthInput = z.infer<typeof CatalogAuthInput>;

/**
 * The catalog auth in the camelCase shape the Iceberg client takes (structurally the
 * `CatalogAuth` of @tablemere/iceberg, which the contracts do not depend on).
 */
export type CatalogAuthSettings =
  | { type: 'oauth2'; clientId: string; clientSecret: string; scope?: string }
  | { type: 'sigv4'; accessKeyId: string; secretAccessKey: string; region: string; service?: string }
  | { type: 'bearer'; token: string }
  | { type: 'none' };

/** The wire form (requests, the roller's view) to the client's shape. */
export function catalogAuthFromWire(auth: CatalogAuthInput): CatalogAuthSettings {
  switch (auth.type) {
    case 'oauth2':
      return { type: 'oauth2', clientId: auth.client_id, clientSecret: auth.client_secret, ...(auth.scope ? { scope: auth.scope } : {}) };
    case 'sigv4':
      return {
        type: 'sigv4',
        accessKeyId: auth.access_key_id,
        secretAccessKey: auth.secret_access_key,
        region: auth.region,
        ...(auth.service ? { service: auth.service } : {}),
      };
    case 'bearer':
      return { type: 'bearer', token: auth.token };
    case 'none':
      return { type: 'none' };
  }
}

/** The client's shape back to the wire form, secrets included: for the internal API only. */
export function catalogAuthToWire(auth: CatalogAuthSettings): CatalogAuthInput {
  switch (auth.type) {
    case 'oauth2':
      return { type: 'oauth2', client_id: auth.clientId, client_secret: auth.clientSecret, ...(auth.scope ? { scope: auth.scope } : {}) };
    case 'sigv4':
      return {
        type: 'sigv4',
        access_key_id: auth.accessKeyId,
        secret_access_key: auth.secretAccessKey,
        region: auth.region,
        ...(auth.service ? { service: auth.service } : {}),
      };
    case 'bearer':
      return { type: 'bearer', token: auth.token };
    case 'none':
      return { type: 'none' };
  }
}

export const CATALOG_AUTH_TYPES = ['oauth2', 'sigv4', 'bearer', 'none'] as const;
export const CatalogAuthType = z.enum(CATALOG_AUTH_TYPES);
export type CatalogAuthType = z.infer<typeof CatalogAuthType>;

/** An S3 bucket name (the general-purpose bucket rules). */
const BucketName = z.string().regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'an S3 bucket name: 3-63 of a-z 0-9 . -');

export const S3Input = z
  .strictObject({
    endpoint: HttpUrl,
    region: Region,
    access_key_id: Secret.optional(),
    secret_access_key: Secret.optional(),
    /**
     * An ordinary bucket of the warehouse where its sinks keep `_sink/` (pending batches,
     * rejects), written with these credentials, so its quota stops the intake. Left out (a
     * table bucket, which takes only Iceberg's own keys): the platform's intake bucket.
     */
    sink_bucket: BucketName.optional(),
  })
  .refine((s3) => (s3.access_key_id === undefined) === (s3.secret_access_key === undefined), {
    message: 'give access_key_id and secret_access_key together, or neither',
    path: ['secret_access_key'],
  })
  .refine((s3) => s3.sink_bucket === undefined || s3.access_key_id !== undefined, {
    message: "sink_bucket needs access_key_id and secret_access_key: sinks write there as the warehouse's identity",
    path: ['sink_bucket'],
  });
export type S3Input = z.infer<typeof S3Input>;

export const CreateWarehouseRequest = z.strictObject({
  name: WarehouseName,
  rest_uri: HttpUrl,
  /** What the catalog calls the warehouse, e.g. `s3://warehouse` for SeaweedFS. */
  warehouse: StorableText.min(1).max(1024),
  auth: CatalogAuthInput,
  s3: S3Input,
});
export type CreateWarehouseRequest = z.infer<typeof CreateWarehouseRequest>;

/**
 * PATCH /v1/warehouses/{warehouse}: new endpoints or credentials for a registration whose
 * catalog or store moved (an address only one host could reach, a rotated secret). `auth` is
 * replaced whole; `s3` field by field (the two keys together). The name and `sink_bucket` stay:
 * batches already waiting in a sink bucket must stay where the roller finds them.
 */
export const UpdateWarehouseRequest = z.strictObject({
  rest_uri: HttpUrl.optional(),
  warehouse: StorableText.min(1).max(1024).optional(),
  auth: CatalogAuthInput.optional(),
  s3: z
    .strictObject({ endpoint: HttpUrl.optional(), region: Region.optional(), access_key_id: Secret.optional(), secret_access_key: Secret.optional() })
    .refine((s3) => (s3.access_key_id === undefined) === (s3.secret_access_key === undefined), {
      message: 'give access_key_id and secret_access_key together, or neither',
      path: ['secret_access_key'],
    })
    .optional(),
});
export type UpdateWarehouseRequest = z.infer<typeof UpdateWarehouseRequest>;

/** The settings a PATCH of a warehouse takes, for `nothing_to_update`'s details (the key id stands for the key pair). */
export const WAREHOUSE_SETTINGS = ['rest_uri', 'warehouse', 'auth', 's3.endpoint', 's3.region', 's3.access_key_id'] as const;

/** A warehouse as the API shows it: the auth type only, never a secret. */
export const Warehouse = z.object({
  id: z.uuid(),
  name: z.string(),
  rest_uri: z.string(),
  warehouse: z.string(),
  auth: z.object({ type: CatalogAuthType }),
  /** sink_bucket: where its sinks keep `_sink/`; null for the platform's intake bucket. */
  s3: z.object({ endpoint: z.string(), region: z.string(), sink_bucket: z.string().nullable() }),
  created_at: Timestamp,
});
export type Warehouse = z.infer<typeof Warehouse>;

export const WarehouseList = z.object({ warehouses: z.array(Warehouse) });
export type WarehouseList = z.infer<typeof WarehouseList>;

/** `{warehouse}` in paths. */
export const WarehouseParams = z.strictObject({ warehouse: WarehouseName });
