import { SEND_REASONS_LIMIT, type SendResult } from '@tablemere/contracts';
import { query, type Pool } from '@tablemere/db';
import { BATCH_CONTENT_TYPE, BATCH_METADATA, batchKey, isStoreError, md5Hex, type ObjectStore } from '@tablemere/store';
import type { FastifyBaseLogger } from 'fastify';
import { ApiError, apiError, RETRY_AFTER_SECONDS } from '../../errors.ts';
import { scanBatch, scanNdjson } from './scan.ts';
import { sameBody, type BodyHashes, type LegacyDigests } from './body-digest.ts';
import type { Claims } from './claim.ts';
import type { LedgerWrites } from './writes.ts';
import { ledgerEntry, storedAnswer, type AnswerColumns } from './ledger.ts';
import { sendKeyRefused } from '../send-keys.ts';

/**
 * The intake: one batch from its checked body to a durable object and a pending ledger row,
 * in the order that loses nothing:
 *   1. claim (sink, batch id, body hash) in the ledger as 'storing' (claim.ts);
 *   2. one PUT of the NDJSON object, never over an existing one;
 *   3. the row becomes 'pending' and the month's usage grows, in one transaction;
 * (1 and 3 go to the database in groups, both kinds in one statement: writes.ts)
 * and only then 202. A failure at 2 removes the claim and answers 503, so no ledger row
 * claims a batch that is not stored.
 */

/** The sink a send key opened. */
export interface SendingSink {
  id: string;
  projectId: string;
  warehouseId: string;
}

export interface IntakeDeps {
  pool: Pool;
  intake: ObjectStore;
  claims: Claims;
  settler: LedgerWrites;
  legacyDigests: LegacyDigests;
  log: FastifyBaseLogger;
}

/** How a send body lists its rows: a JSON array, or NDJSON (one value per line). */
export type BodyFormat = 'array' | 'ndjson';

/** A send body as read: its bytes (decompressed) and their hashes (body-digest.ts). */
export interface SendBody {
  bytes: Buffer;
  hashes: BodyHashes;
  format: BodyFormat;
  /** The bytes that came over the connection (fewer than `bytes` when compressed). */
  wireBytes: number;
}

export interface IntakeAnswer {
  /** 202 for a batch accepted now; 200 for a replay of one accepted before. */
  status: 200 | 202;
  body: SendResult;
}

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

/** Undoes a claim whose object was not stored. Best effort: a leftover claim goes stale and is taken over. */
async function release(deps: IntakeDeps, sinkId: string, batchId: string, claimed: { day: string; receivedAt: string }): Promise<void> {
  try {
    await query(
      deps.pool,
      `DELETE FROM sink_batches WHERE ledger_day = $1 AND sink_id = $2 AND batch_id = $3 AND state = 'storing' AND received_at = $4::timestamptz`,
      [claimed.day, sinkId, batchId, claimed.receivedAt],
    );
  } catch (error) {
    deps.log.warn({ err: error, sink_id: sinkId, batch_id: batchId }, 'could not release a batch claim; it will go stale');
  }
}

/**
 * Step 2: one PUT, never over an existing object. An object already there under this key
 * with the same bytes is an earlier attempt of this very batch (a crash after the PUT):
 * it is kept, with its received time. Answers the received time the object carries.
 */
async function store(deps: IntakeDeps, sink: SendingSink, batchId: string, ndjson: Buffer, lines: number, receivedAt: string): Promise<string> {
  const key = batchKey(sink.id, batchId);
  try {
    await deps.intake.put(key, ndjson, {
      contentType: BATCH_CONTENT_TYPE,
      metadata: { [BATCH_METADATA.received]: receivedAt, [BATCH_METADATA.rows]: String(lines), [BATCH_METADATA.sink]: sink.id },
      ifAbsent: true,
    });
    return receivedAt;
  } catch (error) {
    if (!isStoreError(error, 'precondition_failed')) throw error;
    const head = await deps.intake.head(key);
    if (head.etag !== md5Hex(ndjson)) {
      throw apiError('batch_id_conflict', {
        message: `Batch ${batchId} is already stored with a different body; send new data under a new Idempotency-Key.`,
        details: { batch_id: batchId },
      });
    }
    return head.metadata[BATCH_METADATA.received] ?? receivedAt;
  }
}

/**
 * Checks a send body, stores it and records it. `body.bytes` is changed in place (its
 * objects are compacted into the NDJSON object), so nothing else may read it afterwards;
 * `body.hashes` are of the bytes as sent, which tells a replay from a conflict.
 */
export async function acceptBatch(deps: IntakeDeps, sink: SendingSink, batchId: string, body: SendBody): Promise<IntakeAnswer> {
  const scanned = (body.format === 'ndjson' ? scanNdjson : scanBatch)(body.bytes, SEND_REASONS_LIMIT);
  if (!scanned.ok) {
    const { kind, offset, line, detail } = scanned.error;
    if (kind === 'not_an_array') throw apiError('not_an_array');
    throw line === undefined
      ? apiError('invalid_json', { message: `The body is not valid JSON (${detail} at byte ${offset}); send a JSON array of objects.`, details: { offset } })
      : apiError('invalid_json', { message: `Line ${line} is not valid JSON (${detail} at byte ${offset}); send one JSON object per line.`, details: { line, offset } });
  }
  const { ndjson, objects, nonObjects, nonObjectIndexes, nonObjectLines } = scanned.batch;
  // Every element is stored; the roll writes the ones that are not objects to the rejects
  // file (not_an_object). The answer names them now so the producer need not wait for it.
  const reasons = nonObjectIndexes.map((index, i) => ({ index, ...(nonObjectLines ? { line: nonObjectLines[i]! } : {}), reason: 'not_an_object' as const }));
  if (objects + nonObjects === 0) throw apiError('empty_batch');

  const claimed = await throughDatabase(() =>
    deps.claims.claim({ sinkId: sink.id, batchId, hashes: body.hashes, bytes: ndjson.length, rows: objects, rejected: nonObjects, reasons: nonObjectIndexes }),
  );
  if (claimed.kind === 'sink_gone') throw sendKeyRefused();
  if (claimed.kind === 'replay') return { status: 200, body: claimed.response };
  if (claimed.kind === 'conflict') {
    throw apiError('batch_id_conflict', {
      message: `Batch ${batchId} was already sent with a different body; send new data under a new Idempotency-Key.`,
      details: { batch_id: batchId },
    });
  }
  if (claimed.kind === 'unknown') throw legacyRowMet(deps);
  if (claimed.kind === 'in_progress') {
    throw apiError('batch_in_progress', {
      headers: { 'retry-after': String(RETRY_AFTER_SECONDS) },
      details: { batch_id: batchId, retry_after: RETRY_AFTER_SECONDS },
    });
  }

  let receivedAt: string;
  try {
    receivedAt = await store(deps, sink, batchId, ndjson, objects + nonObjects, claimed.receivedAt);
  } catch (error) {
    await release(deps, sink.id, batchId, claimed);
    if (isStoreError(error, 'quota_exceeded')) throw apiError('quota_exceeded', { cause: error });
    if (isStoreError(error)) throw intakeUnavailable('the store could not take it', error);
    throw error;
  }

  const response: SendResult = { accepted: objects, rejected: nonObjects, reasons, batch_id: batchId, bytes: ndjson.length, received_at: receivedAt, state: 'pending' };
  const settlement = { sinkId: sink.id, projectId: sink.projectId, batchId, day: claimed.day, receivedAt, wireBytes: body.wireBytes };
  if (await throughDatabase(() => deps.settler.settle(settlement))) return { status: 202, body: response };
  // Nothing settled: the sink was deleted meanwhile, or a replay took the claim over and finished.
  const now = await throughDatabase(() => ledgerEntry(deps.pool, sink.id, batchId));
  if (!now?.live) {
    // Not accepted, so not kept: the delete's cleanup may have run before this object landed.
    await deps.intake.deleteMany([batchKey(sink.id, batchId)]).catch((error: unknown) => {
      deps.log.warn({ err: error, sink_id: sink.id, batch_id: batchId }, "could not remove a deleted sink's batch object");
    });
    throw sendKeyRefused();
  }
  if (now.state !== null && now.state !== 'storing' && now.body_digest) {
    const same = sameBody(now.body_digest, body.hashes);
    if (same === 'unknown') throw legacyRowMet(deps);
    if (same) return { status: 200, body: storedAnswer(now as AnswerColumns) };
  }
  throw intakeUnavailable('the batch changed hands while it was stored');
}

/** A ledger row of before migration 0018 met by a send not hashed its way: hashed so from now on, and asked again. */
function legacyRowMet(deps: IntakeDeps): ApiError {
  deps.legacyDigests.met();
  return intakeUnavailable('this batch id was first sent to an earlier version of the intake, which hashed bodies another way, and this process has just started hashing them that way too');
}

