import { isIcebergError } from '@tablemere/iceberg';
import { isStoreError } from '@tablemere/store';

/**
 * Why a roll ended without finishing, as a closed set: logs, metrics and reports carry the
 * kind, and code branches on it, never on message text.
 */
export const FAILURE_REASONS = [
  /** The table (or its namespace) is not in the catalog: the sink is marked table_missing. */
  'table_missing',
  /** The table is one this writer does not append to (format v1 or v3, a transform it does not know). */
  'table_unsupported',
  /** The catalog did not answer, or answered 5xx outside a commit. */
  'catalog_unavailable',
  /** The warehouse's credentials were refused by the catalog or the table's storage. */
  'catalog_denied',
  /** The intake store did not answer. */
  'store_unavailable',
  /** The intake store refused the platform's credentials for a read or write. */
  'store_denied',
  /** Consumed batches could not all be deleted from intake: the roll stops, lag grows. */
  'delete_failed',
  /** An open roll intent whose commit can be neither confirmed nor ruled out. */
  'intent_unresolved',
  /** A sink snapshot names a sidecar of batch ids that is gone or not its own: its batches cannot be told. */
  'sidecar_missing',
  /** Every commit attempt lost the race to another writer. */
  'commit_conflict',
  /** The commit's outcome is unknown; the next roll settles it from the table's ancestry. */
  'commit_unknown',
  /** Another roller took the sink's lease over. */
  'lease_lost',
  /** The internal API did not answer, or refused a request. */
  'api_error',
  /** The process is stopping. */
  'aborted',
  /** Anything unexpected: a bug. */
  'internal',
] as const;

export type FailureReason = (typeof FAILURE_REASONS)[number];

export class RollError extends Error {
  override readonly name = 'RollError';

  constructor(
    readonly reason: FailureReason,
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
  }
}

export function isRollError(error: unknown, reason?: FailureReason): error is RollError {
  return error instanceof RollError && (reason === undefined || error.reason === reason);
}

/** Any failure as a RollError: Iceberg and store errors by their kind, the rest as internal. */
export function toRollError(error: unknown, context: 'catalog' | 'table_storage' | 'intake'): RollError {
  if (error instanceof RollError) return error;
  const message = error instanceof Error ? error.message : String(error);
  if (isIcebergError(error)) {
    switch (error.kind) {
      case 'not_found':
        return new RollError(context === 'catalog' ? 'table_missing' : 'internal', message, { cause: error });
      case 'unauthorized':
      case 'forbidden':
        return new RollError('catalog_denied', message, { cause: error });
      case 'unsupported':
        return new RollError('table_unsupported', message, { cause: error });
      case 'commit_conflict':
      // A rewrite whose files another writer removed meanwhile lost to it, like a lost race.
      case 'validation_failed':
        return new RollError('commit_conflict', message, { cause: error });
      case 'commit_state_unknown':
        return new RollError('commit_unknown', message, { cause: error });
      case 'unavailable':
      case 'server_error':
        return new RollError('catalog_unavailable', message, { cause: error });
      default:
        return new RollError('internal', message, { cause: error });
    }
  }
  if (isStoreError(error)) {
    if (error.kind === 'denied' || error.kind === 'quota_exceeded') return new RollError('store_denied', message, { cause: error });
    if (error.kind === 'unavailable') return new RollError('store_unavailable', message, { cause: error });
  }
  return new RollError('internal', message, { cause: error });
}
