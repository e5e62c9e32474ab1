import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { IcebergError } from '@tablemere/iceberg';
import { DatabaseUnavailableError } from '@tablemere/db';
import { z } from 'zod';
import { lingerOnClose } from './http/lingering-close.ts';

/**
 * Every error code the API answers, with its status and a default message that says what
 * to do (`retryAfter`: answered with a Retry-After header). One registry: routes raise codes
 * from it, one handler renders them, the OpenAPI document lists them.
 */
export const ERROR_CODES = {
  invalid_request: { status: 400, message: 'The request does not match what this route accepts; see issues.' },
  invalid_json: { status: 400, message: 'The body is not valid JSON; send a JSON object.' },
  idempotency_key_missing: { status: 400, message: 'Send the batch id as "Idempotency-Key: <1-128 of A-Z a-z 0-9 . _ : ->"; the same id again is a replay. A shipper that can only send fixed headers: set the sink\'s batch_ids to content.' },
  idempotency_key_invalid: { status: 400, message: 'The Idempotency-Key must be 1-128 characters of A-Z a-z 0-9 . _ : -; fix it and send again.' },
  invalid_compressed_body: { status: 400, message: 'The body does not decompress under its Content-Encoding (corrupt or cut short); send it again whole.' },
  not_an_array: { status: 400, message: 'The body is JSON but not an array; send a JSON array of objects, e.g. [{"x": 1}].' },
  nothing_to_update: { status: 400, message: 'The body names no setting to change; send at least one of the settings listed in details.settings.' },
  partition_invalid: { status: 400, message: 'A partition field is not transform(column) or repeats another; use identity, bucket[N], truncate[W], year, month, day or hour, e.g. day(__ingest_ts).' },
  partition_field_unknown: { status: 400, message: "A partition field's source is not a column of the table (nested ones as a.b) nor __ingest_ts; columns lists them." },
  partition_transform_invalid: { status: 400, message: "A partition field's transform does not apply to its column's type (e.g. day needs a date or timestamp, truncate a number, string or binary)." },
  empty_batch: { status: 400, message: 'The array is empty: there is no row to store; send at least one object.' },
  schema_not_inferred: { status: 400, message: 'Some fields of the sample rows cannot be typed (details.fields names each, with why); fix the sample, or give create_table.columns.' },
  unauthorized: { status: 401, message: 'Send a valid API key as "Authorization: Bearer tm_key_...".' },
  send_only: { status: 403, message: 'Wrong kind of key for this route: a send key works only on POST /v1/sinks/{sink_id}, and that route takes only the sink\'s send key.' },
  forbidden: { status: 403, message: "This API key's level is too low for this route; use a key with required_level or higher." },
  not_found: { status: 404, message: 'No such route; check the method and the path.' },
  key_not_found: { status: 404, message: 'No active API key has this id; list keys with GET /v1/keys.' },
  warehouse_not_found: { status: 404, message: 'No warehouse has this name; list them with GET /v1/warehouses.' },
  table_not_found: { status: 404, message: 'The table does not exist; tables lists those in its namespace.' },
  sink_not_found: { status: 404, message: 'No sink has this id or name in this project; list them with GET /v1/sinks.' },
  roll_not_found: { status: 404, message: 'This sink has no roll intent with this id; list them with GET /internal/sinks/{id}/rolls.' },
  warehouse_exists: { status: 409, message: 'A warehouse with this name exists in the project; pick another name.' },
  table_exists: { status: 409, message: 'The table already exists; pick another name or use the existing table.' },
  sink_exists: { status: 409, message: 'A sink already feeds this table or has this name; use it, or delete it first.' },
  key_rotation_in_progress: { status: 409, message: "The send key's last rotation is still in its overlap (its old key works until old_key_stops_at); wait until then, or rotate with {\"finish\": true} to stop the old key now." },
  partition_conflict: { status: 409, message: "The table is already partitioned by other fields; leave partition out to keep the owner's spec, or give the same fields." },
  table_format_unsupported: { status: 409, message: "Sinks append to format v2 and v3 tables; upgrade the table's format-version with its engine, or point the sink at another table." },
  batch_id_conflict: { status: 409, message: 'This batch id was already used for a different body; send new data under a new Idempotency-Key.' },
  batch_in_progress: { status: 409, message: 'A request with this batch id is being stored right now; retry after Retry-After seconds.', retryAfter: true },
  quota_exceeded: { status: 409, message: "The project's storage is over its quota, so the intake takes no more batches; free space or raise the quota." },
  last_admin_key: { status: 409, message: "This is the project's last active admin key; create another admin key before revoking it." },
  warehouse_not_measurable: { status: 409, message: 'This warehouse is not an s3:// location with S3 credentials, so its storage cannot be listed.' },
  lease_held: { status: 409, message: "Another roller holds this sink's lease; skip the sink and try after expires_at." },
  lease_lost: { status: 409, message: "This lease is no longer the sink's (released or taken over after expiry); stop the roll and lease again." },
  roll_conflict: { status: 409, message: 'The report or intent disagrees with the recorded roll intent; re-read it with GET /internal/sinks/{id}/rolls.' },
  upkeep_conflict: { status: 409, message: 'An upkeep with this started_at was already reported with other figures; a report cannot change it.' },
  request_timeout: { status: 408, message: 'The request did not arrive in time (headers or body too slow) and the connection was closed; send it again, faster.' },
  body_too_large: { status: 413, message: 'The body is larger than this route accepts; send less.' },
  unsupported_media_type: { status: 415, message: 'Send the body as JSON with "Content-Type: application/json".' },
  unsupported_encoding: { status: 415, message: 'This Content-Encoding is not supported; send the body with one of gzip, deflate, zstd or identity, or uncompressed.' },
  headers_too_large: { status: 431, message: 'The request headers are larger than the server takes (16 KiB); send fewer or shorter headers.' },
  backlog_full: {
    status: 429,
    message: "The sink's backlog of batches waiting for a roll is full; retry after Retry-After seconds, set from the rate the sink's rolls drain it (details: pending and max_pending batches and bytes, drain_batches_per_second).",
    retryAfter: true,
  },
  client_aborted: { status: 499, message: 'The connection closed before the whole request arrived (the client hung up, or was slower than the server waits); nothing was stored: send it again.' },
  internal_error: { status: 500, message: 'Something failed on our side; retry, and report request_id if it persists.' },
  catalog_error: { status: 502, message: "The warehouse's Iceberg catalog refused or failed the request; check the warehouse registration." },
  measure_failed: { status: 502, message: "Listing the warehouse's bucket with its S3 credentials failed; check its S3 endpoint and keys." },
  catalog_unavailable: { status: 503, message: "The warehouse's Iceberg catalog could not be reached; retry after Retry-After seconds.", retryAfter: true },
  database_unavailable: { status: 503, message: 'The database could not be reached or did not answer in time; retry after Retry-After seconds.', retryAfter: true },
  intake_unavailable: { status: 503, message: 'The batch could not be stored (store or database unavailable) and was not accepted; send it again after Retry-After seconds.', retryAfter: true },
  intake_busy: { status: 503, message: 'Too many send bodies are in flight (for this sink or in all); nothing was read or stored: send it again after Retry-After seconds.', retryAfter: true },
} as const satisfies Record<string, { status: number; message: string; retryAfter?: true }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** Seconds a client should wait before retrying a 503. */
export const RETRY_AFTER_SECONDS = 5;

export interface ApiErrorOptions {
  message?: string;
  /** Extra fields in the error body, e.g. `issues`, `tables`. */
  details?: Record<string, unknown>;
  headers?: Record<string, string>;
  cause?: unknown;
}

export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly status: number;
  readonly details: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(
    readonly code: ErrorCode,
    options: ApiErrorOptions = {},
  ) {
    super(options.message ?? ERROR_CODES[code].message, options.cause === undefined ? undefined : { cause: options.cause });
    this.status = ERROR_CODES[code].status;
    this.details = options.details ?? {};
    this.headers = options.headers ?? {};
  }
}

export function apiError(code: ErrorCode, options: ApiErrorOptions = {}): ApiError {
  return new ApiError(code, options);
}

/** A zod failure on part of a request (`body`, `params`, `query`) as a 400 with the issues. */
export function invalidRequest(error: z.ZodError, part: 'body' | 'params' | 'query' | 'headers'): ApiError {
  const issues = error.issues.map((issue) => ({
    path: [part, ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))],
    code: issue.code,
    message: issue.message,
  }));
  const first = issues[0];
  const message = first ? `${first.path.join('.')}: ${first.message}` : ERROR_CODES.invalid_request.message;
  return apiError('invalid_request', { message, details: { issues } });
}

export function warehouseNotFound(name: string): ApiError {
  return apiError('warehouse_not_found', {
    message: `No warehouse named "${name}" in this project; list them with GET /v1/warehouses.`,
    details: { warehouse: name },
  });
}

export function tableNotFound(table: string, tables: string[]): ApiError {
  return apiError('table_not_found', {
    message: `Table ${table} does not exist; tables lists the tables in its namespace.`,
    details: { table, tables },
  });
}

/**
 * A failed catalog call: unreachable or overloaded is 503 with Retry-After (try again), any
 * other failure is 502 with the catalog's status (fix the registration or the request).
 */
export function catalogFailure(error: IcebergError): ApiError {
  if (error.kind === 'unavailable') {
    return apiError('catalog_unavailable', {
      headers: { 'retry-after': String(RETRY_AFTER_SECONDS) },
      details: { retry_after: RETRY_AFTER_SECONDS },
      cause: error,
    });
  }
  return apiError('catalog_error', {
    message: `${ERROR_CODES.catalog_error.message} (${error.message})`,
    details: { catalog_status: error.status ?? null, catalog_error: error.kind },
    cause: error,
  });
}

/** Fastify's own request errors, each to a clear code. */
const FASTIFY_CODES: Readonly<Record<string, ErrorCode>> = {
  FST_ERR_CTP_INVALID_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_BODY_TOO_LARGE: 'body_too_large',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'invalid_request',
  FST_ERR_BAD_URL: 'invalid_request',
  FST_ERR_MAX_PARAM_LENGTH: 'invalid_request',
};

/** Turns anything thrown in a request into an ApiError; the unknown becomes internal_error. */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof z.ZodError) return invalidRequest(error, 'body');
  if (error instanceof IcebergError) return catalogFailure(error);
  if (error instanceof DatabaseUnavailableError) {
    return apiError('database_unavailable', { headers: { 'retry-after': String(RETRY_AFTER_SECONDS) }, details: { retry_after: RETRY_AFTER_SECONDS }, cause: error });
  }
  const code = (error as Partial<FastifyError> | undefined)?.code;
  const mapped = code === undefined ? undefined : FASTIFY_CODES[code];
  if (mapped) return apiError(mapped, { cause: error });
  return apiError('internal_error', { cause: error });
}

/** Logs and sends one error as `{"error": {code, message, ...details, request_id}}`. */
export function sendError(error: unknown, request: FastifyRequest, reply: FastifyReply): void {
  // Node's "aborted" while the body was read: the client left (or was timed out), nothing failed here.
  const apiErr = request.raw.readableAborted && !(error instanceof ApiError) ? apiError('client_aborted', { cause: error }) : toApiError(error);
  if (apiErr.status >= 500) {
    request.log.error({ err: error, code: apiErr.code }, 'request failed');
  } else {
    request.log.info({ code: apiErr.code, status: apiErr.status }, 'request refused');
  }
  // Refused before the body was read (auth, caps, a declared length over the limit): close the
  // connection after the answer, so Node does not read and discard the rest of the body first;
  // but not at once, or the client may never see the answer (lingering-close.ts).
  if (request.raw.complete === false) {
    void reply.header('connection', 'close');
    lingerOnClose(request.raw);
  }
  void reply
    .status(apiErr.status)
    .headers(apiErr.headers)
    .send({ error: { code: apiErr.code, message: apiErr.message, ...apiErr.details, request_id: request.id } });
}

/** Installs the one error handler and the not-found handler on `app`. */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler(sendError);
  app.setNotFoundHandler((request, reply) => {
    sendError(apiError('not_found', { message: `${ERROR_CODES.not_found.message} (${request.method} ${request.url.split('?')[0]})` }), request, reply);
  });
}
