import { z } from 'zod';

/**
 * Namespace and table names: lowercase letters, digits and underscores, starting with a
 * letter or digit. That is the strictest rule among the catalogs we target (S3 Tables;
 * SeaweedFS refuses uppercase and a leading `_` or `-`), so a name valid here is valid there.
 */
export const ICEBERG_NAME_PATTERN = /^[a-z0-9][a-z0-9_]*$/;

export const IcebergName = z
  .string()
  .max(255)
  .regex(ICEBERG_NAME_PATTERN, 'use lowercase letters, digits and underscores, starting with a letter or digit');

/** Warehouse names appear in URL paths: keep them short and URL-safe. */
export const WAREHOUSE_NAME_PATTERN = /^[a-z0-9][a-z0-9_-]{0,62}$/;

export const WarehouseName = z
  .string()
  .regex(WAREHOUSE_NAME_PATTERN, 'use 1-63 lowercase letters, digits, "_" or "-", starting with a letter or digit');

/**
 * Column names: a letter or underscore, then letters, digits and underscores. Engines differ
 * on quoting anything else, and a JSON producer must be able to name the field plainly.
 */
export const COLUMN_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;

export const ColumnName = z
  .string()
  .max(255)
  .regex(COLUMN_NAME_PATTERN, 'use letters, digits and underscores, starting with a letter or underscore');

/**
 * What Postgres `text` and `jsonb` cannot hold: NUL, and a lone UTF-16 surrogate (JSON can
 * spell one, `"\\ud800"`, but it has no UTF-8 form).
 */
const UNSTORABLE = /[\0\p{Cs}]/u;

export const STORABLE_TEXT_MESSAGE = 'must be valid Unicode text: no NUL and no lone surrogate (\\ud800-\\udfff)';

/** Whether `text` can be stored as Postgres text as it is. */
export function isStorableText(text: string): boolean {
  return !UNSTORABLE.test(text);
}

/**
 * `text` cut to `max` UTF-16 units and made storable (a lone surrogate, e.g. from the cut, and
 * NUL become U+FFFD): for messages the platform passes on, such as a roller's error.
 */
export function toStorableText(text: string, max: number): string {
  return text.slice(0, max).toWellFormed().replaceAll('\0', '\ufffd');
}

/** Free text a request may carry (names, URIs, messages): a string Postgres can store unchanged. */
export const StorableText = z.string().refine(isStorableText, STORABLE_TEXT_MESSAGE);

/** A timestamp as the API writes it (RFC 3339, UTC). */
export const Timestamp = z.iso.datetime({ offset: true });
