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

/** A timestamp as the API writes it (RFC 3339, UTC). */
export const Timestamp = z.iso.datetime({ offset: true });
