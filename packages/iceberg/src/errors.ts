/**
 * The one error type of this package. `kind` is a closed set so callers branch on it, never
 * on message text; `status` is the HTTP status when a server answered; `cause` keeps the
 * original error.
 */
export type IcebergErrorKind =
  /** The namespace, table or object does not exist. */
  | 'not_found'
  /** Create found the namespace or table already there. */
  | 'already_exists'
  /** A commit requirement failed (409): another writer won; reload and retry. */
  | 'commit_conflict'
  /** A commit got a 5xx or no answer: it may or may not have landed; check before retrying. */
  | 'commit_state_unknown'
  | 'unauthorized'
  | 'forbidden'
  /** The server rejected the request as malformed or invalid. */
  | 'bad_request'
  /** The server could not be reached, timed out, or answered 502/503/504 outside a commit. */
  | 'unavailable'
  /** Any other server failure. */
  | 'server_error'
  /** The table uses something this library does not write (e.g. format v1 or v3). */
  | 'unsupported'
  /**
   * Another writer changed what an operation was planned on (e.g. deleted or rewrote files a
   * rewrite replaces): retrying the same commit would lose or revive rows; plan it again.
   */
  | 'validation_failed';

const RETRYABLE: ReadonlySet<IcebergErrorKind> = new Set(['commit_conflict', 'unavailable']);

export interface IcebergErrorOptions {
  status?: number;
  cause?: unknown;
  /** The server's error type, e.g. `CommitFailedException`, kept for diagnostics. */
  serverType?: string;
}

export class IcebergError extends Error {
  override readonly name = 'IcebergError';
  readonly kind: IcebergErrorKind;
  readonly status: number | undefined;
  readonly serverType: string | undefined;
  /** True when repeating the same operation (after a reload, for commits) can succeed. */
  readonly retryable: boolean;

  constructor(kind: IcebergErrorKind, message: string, options: IcebergErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.kind = kind;
    this.status = options.status;
    this.serverType = options.serverType;
    this.retryable = RETRYABLE.has(kind);
  }
}

export function isIcebergError(error: unknown, kind?: IcebergErrorKind): error is IcebergError {
  return error instanceof IcebergError && (kind === undefined || error.kind === kind);
}
