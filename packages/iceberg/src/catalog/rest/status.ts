import { IcebergError, type IcebergErrorKind } from '../../errors.ts';

/** What a request was doing, because the same status means different things per operation. */
export type Operation = 'commit' | 'create' | 'read' | 'other';

const GATEWAY_STATUSES: ReadonlySet<number> = new Set([502, 503, 504]);

/** Maps an HTTP status to an error kind (REST catalog spec, CommitTable and error responses). */
export function kindForStatus(status: number, operation: Operation): IcebergErrorKind {
  if (status === 404) return 'not_found';
  if (status === 409) return operation === 'commit' ? 'commit_conflict' : 'already_exists';
  // 419 is the spec's "credentials expired".
  if (status === 401 || status === 419) return 'unauthorized';
  if (status === 403) return 'forbidden';
  if (status === 400 || status === 406 || status === 422) return 'bad_request';
  if (status >= 500) {
    // After a commit reached the server, any 5xx leaves its outcome open.
    if (operation === 'commit') return 'commit_state_unknown';
    return GATEWAY_STATUSES.has(status) ? 'unavailable' : 'server_error';
  }
  return 'server_error';
}

interface ErrorBody {
  message?: unknown;
  type?: unknown;
}

/**
 * Builds the error for a non-2xx answer: the spec's `{"error": {message, type, code}}` body, or
 * the `{"message": ..., "type": ...}` some servers answer on 500 (Iceberg's reference server).
 */
export function errorFromResponse(status: number, body: unknown, operation: Operation, what: string): IcebergError {
  const wrapped = body && typeof body === 'object' && 'error' in body ? (body as { error: unknown }).error : undefined;
  const detail = ((wrapped && typeof wrapped === 'object' ? wrapped : body) ?? {}) as ErrorBody;
  const serverMessage = typeof detail.message === 'string' ? detail.message : undefined;
  const serverType = typeof detail.type === 'string' ? detail.type : undefined;
  const message = `${what}: HTTP ${status}${serverMessage ? ` ${serverMessage}` : ''}`;
  return new IcebergError(kindForStatus(status, operation), message, { status, ...(serverType ? { serverType } : {}) });
}

/** Error codes of a connection that never reached the server: a retry cannot double-apply. */
const NOT_SENT_CODES: ReadonlySet<string> = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

function errorCode(error: unknown): string | undefined {
  for (let e: unknown = error; e && typeof e === 'object'; e = (e as { cause?: unknown }).cause) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

/** Builds the error for a request that got no answer (refused, reset, timed out). */
export function errorFromTransport(cause: unknown, operation: Operation, what: string): IcebergError {
  const code = errorCode(cause);
  const timedOut = cause instanceof DOMException && cause.name === 'TimeoutError';
  const neverSent = code !== undefined && NOT_SENT_CODES.has(code);
  const kind: IcebergErrorKind = operation === 'commit' && !neverSent ? 'commit_state_unknown' : 'unavailable';
  const reason = timedOut ? 'timed out' : (code ?? 'no response');
  return new IcebergError(kind, `${what}: ${reason}`, { cause });
}
