import { S3ServiceException } from '@aws-sdk/client-s3';

/**
 * What went wrong with a store call, as a closed set: callers branch on `kind`, never on the
 * store's message text.
 */
export type StoreErrorKind =
  /** No answer (refused, reset, timed out) or a 5xx / throttling answer: try again later. */
  | 'unavailable'
  /** The bucket takes no more writes (over its quota, read-only) while it can still be read. */
  | 'quota_exceeded'
  /** A conditional write found the object already there (If-None-Match). */
  | 'precondition_failed'
  | 'not_found'
  /** Our credentials were refused, or we may not do this at all. */
  | 'denied'
  /** The store refused the request as malformed: a bug on our side, not worth retrying. */
  | 'bad_request';

export interface StoreErrorOptions {
  status?: number;
  /** The store's error code, e.g. `AccessDenied`, kept for diagnostics. */
  code?: string;
  cause?: unknown;
}

export class StoreError extends Error {
  override readonly name = 'StoreError';
  readonly status: number | undefined;
  readonly code: string | undefined;
  /** True when the same call may succeed later unchanged. */
  readonly retryable: boolean;

  constructor(
    readonly kind: StoreErrorKind,
    message: string,
    options: StoreErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.status = options.status;
    this.code = options.code;
    this.retryable = kind === 'unavailable';
  }
}

export function isStoreError(error: unknown, kind?: StoreErrorKind): error is StoreError {
  return error instanceof StoreError && (kind === undefined || error.kind === kind);
}

/** Error codes stores use for a bucket or account over its quota (Ceph RGW, MinIO). */
const QUOTA_CODES: ReadonlySet<string> = new Set(['QuotaExceeded', 'XMinioAdminBucketQuotaExceeded']);
const NOT_FOUND_CODES: ReadonlySet<string> = new Set(['NoSuchKey', 'NoSuchBucket', 'NotFound']);

/** The kind of an S3 answer by its status and code alone. */
export function kindOfAnswer(status: number | undefined, code: string | undefined): StoreErrorKind {
  if (status === undefined) return 'unavailable';
  if (code !== undefined && QUOTA_CODES.has(code)) return 'quota_exceeded';
  if (status === 412 || code === 'PreconditionFailed') return 'precondition_failed';
  if (status === 404 || (code !== undefined && NOT_FOUND_CODES.has(code))) return 'not_found';
  if (status === 401 || status === 403) return 'denied';
  if (status === 429 || status >= 500) return 'unavailable';
  return 'bad_request';
}

/** Any failure of an S3 SDK call as a StoreError naming the operation. */
export function toStoreError(operation: string, error: unknown): StoreError {
  if (error instanceof StoreError) return error;
  if (error instanceof S3ServiceException) {
    const status = error.$metadata.httpStatusCode;
    const code = error.name;
    return new StoreError(kindOfAnswer(status, code), `${operation}: ${code}${status ? ` (HTTP ${status})` : ''}`, {
      ...(status ? { status } : {}),
      code,
      cause: error,
    });
  }
  // No answer from the store at all: refused, reset, timed out or aborted.
  const reason = (error as { code?: unknown; name?: unknown } | undefined)?.code ?? (error as { name?: unknown } | undefined)?.name;
  return new StoreError('unavailable', `${operation}: no answer from the store${typeof reason === 'string' ? ` (${reason})` : ''}`, {
    cause: error,
  });
}
