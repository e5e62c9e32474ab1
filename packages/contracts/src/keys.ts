import { z } from 'zod';
import { StorableText, Timestamp } from './names.ts';

/**
 * Key prefixes follow the project's one naming rule (`tm_` for keys, as `TABLEMERE_` for
 * environment variables). Keys are issued with these; older keys carry the deprecated `al_`
 * prefixes below and keep working forever (their digest covers the whole key, prefix included).
 */
export const API_KEY_PREFIX = 'tm_key_';
export const SEND_KEY_PREFIX = 'tm_send_';
/** Deprecated prefixes, accepted and never issued. */
export const DEPRECATED_API_KEY_PREFIX = 'al_key_';
export const DEPRECATED_SEND_KEY_PREFIX = 'al_send_';

/** `tm_key_<12 hex id>_<43 base64url chars>` (or the deprecated `al_key_`): the id is public (lookup), the rest is the secret (32 bytes). */
export const API_KEY_PATTERN = new RegExp(`^(?:${API_KEY_PREFIX}|${DEPRECATED_API_KEY_PREFIX})([0-9a-f]{12})_([A-Za-z0-9_-]{43})$`);

/** `tm_send_<12 hex id>_<43 base64url chars>` (or the deprecated `al_send_`): a sink's send-only key. */
export const SEND_KEY_PATTERN = new RegExp(`^(?:${SEND_KEY_PREFIX}|${DEPRECATED_SEND_KEY_PREFIX})([0-9a-f]{12})_([A-Za-z0-9_-]{43})$`);

/** How keys are written in messages and docs. */
export const API_KEY_FORMAT = `${API_KEY_PREFIX}<12 hex>_<43 characters>`;
export const SEND_KEY_FORMAT = `${SEND_KEY_PREFIX}<12 hex>_<43 characters>`;

export const KEY_ID_PATTERN = /^[0-9a-f]{12}$/;

/** API key levels, weakest first: each level can do everything the ones before it can. */
export const API_KEY_LEVELS = ['read', 'write', 'admin'] as const;
export const ApiKeyLevel = z.enum(API_KEY_LEVELS);
export type ApiKeyLevel = z.infer<typeof ApiKeyLevel>;

export const KeyId = z.string().regex(KEY_ID_PATTERN, 'a key id is 12 lowercase hex digits');

export const CreateKeyRequest = z.strictObject({
  name: StorableText.trim().min(1).max(100),
  level: ApiKeyLevel,
});
export type CreateKeyRequest = z.infer<typeof CreateKeyRequest>;

/** An API key as listed: never the key itself. */
export const ApiKey = z.object({
  id: KeyId,
  name: z.string(),
  level: ApiKeyLevel,
  created_at: Timestamp,
});
export type ApiKey = z.infer<typeof ApiKey>;

/** The answer to create: the only time `key` is ever shown. */
export const CreatedKey = ApiKey.extend({
  key: z.string().regex(API_KEY_PATTERN),
});
export type CreatedKey = z.infer<typeof CreatedKey>;

export const KeyList = z.object({ keys: z.array(ApiKey) });
export type KeyList = z.infer<typeof KeyList>;

export const RevokedKey = ApiKey.extend({ revoked_at: Timestamp });
export type RevokedKey = z.infer<typeof RevokedKey>;
