import type { LoadTableResult } from '../catalog/rest/types.ts';
import { IcebergError } from '../errors.ts';
import { S3FileIO, type S3FileIOOptions } from './s3.ts';

/**
 * The FileIO for one table: credentials the catalog vended in LoadTable (`config` or the
 * longest matching `storage-credentials` prefix) when present, else the configured ones.
 * Endpoint, region and path style come from the catalog's `s3.*` properties when given.
 * A catalog that asks for S3 remote signing (`s3.remote-signing-enabled`) is refused when
 * neither vended nor configured credentials exist: this client does not sign through the
 * catalog, and unsigned writes would fail later and less clearly.
 */
export function s3FileIOForTable(table: LoadTableResult, fallback: S3FileIOOptions): S3FileIO {
  const location = table.metadata.location;
  const scoped = table.storageCredentials
    .filter((c) => location.startsWith(c.prefix))
    .sort((a, b) => b.prefix.length - a.prefix.length)[0];
  const props = { ...table.config, ...scoped?.config };
  const accessKeyId = props['s3.access-key-id'];
  const secretAccessKey = props['s3.secret-access-key'];
  const sessionToken = props['s3.session-token'];
  const endpoint = props['s3.endpoint'] ?? fallback.endpoint;
  const region = props['s3.region'] ?? props['client.region'] ?? fallback.region;
  if (props['s3.remote-signing-enabled'] === 'true' && !(accessKeyId && secretAccessKey) && !fallback.credentials) {
    throw new IcebergError(
      'unsupported',
      `table at ${location}: the catalog asks for S3 remote signing, which this client does not do; give the warehouse S3 credentials or let the catalog vend them`,
    );
  }
  const pathStyle = props['s3.path-style-access'] === undefined ? fallback.pathStyle : props['s3.path-style-access'] === 'true';
  return new S3FileIO({
    ...fallback,
    region,
    ...(endpoint ? { endpoint } : {}),
    ...(pathStyle === undefined ? {} : { pathStyle }),
    ...(accessKeyId && secretAccessKey
      ? { credentials: { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) } }
      : {}),
  });
}
