import { ApiError, apiError, RETRY_AFTER_SECONDS } from '../../errors.ts';

/** SQLSTATE classes that mean "the database cannot serve now", not "this statement is wrong". */
const UNAVAILABLE_SQLSTATE_CLASSES = new Set(['08', '40', '53', '57', '58']);

/**
 * Runs a database call of the send path. A failure that means "the database cannot serve
 * now" (no connection, pool timeout, overload, shutdown, serialization) becomes
 * intake_unavailable (503, retry); a statement the server refused for what it is (a
 * constraint, a syntax error) stays as it is, a 500.
 */
export async function throughDatabase<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    const code = (error as { code?: unknown } | undefined)?.code;
    const sqlstate = typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
    if (error instanceof ApiError || (sqlstate !== undefined && !UNAVAILABLE_SQLSTATE_CLASSES.has(sqlstate.slice(0, 2)))) throw error;
    // No SQLSTATE: pg's own failures (refused, reset, pool timeout) never reached a statement.
    throw intakeUnavailable('the database is unavailable', error);
  }
}

export function intakeUnavailable(what: string, cause?: unknown): ApiError {
  return apiError('intake_unavailable', {
    message: `The batch was not accepted: ${what}. Send it again with the same Idempotency-Key after Retry-After seconds.`,
    headers: { 'retry-after': String(RETRY_AFTER_SECONDS) },
    details: { retry_after: RETRY_AFTER_SECONDS },
    ...(cause === undefined ? {} : { cause }),
  });
}
