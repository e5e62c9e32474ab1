import { type BatchIds, SEND_REASONS_LIMIT } from '@tablemere/contracts';
import type { Pool } from '@tablemere/db';
import type { ObjectStore } from '@tablemere/store';
import type { FastifyBaseLogger } from 'fastify';
import { type ApiError, apiError, RETRY_AFTER_SECONDS } from '../../errors.ts';
import { scanBatch, scanNdjson } from './scan.ts';
import { sameBody, type BodyHashes, type LegacyDigests } from './body-digest.ts';
import { ledgerEntry, storedAnswer, type AnswerColumns, type StoredAnswer } from './ledger.ts';
import type { SegmentWriter } from './segments.ts';
import { intakeUnavailable, throughDatabase } from './unavailable.ts';
import { sendKeyRefused } from '../sinks/send-keys.ts';

/**
 * The intake: one batch from its checked body to a durable object and a pending ledger row.
 * The body is checked here; claiming it, storing it in a segment with the sink's other sends
 * of the moment, and settling it go in segments.ts, in the order that loses nothing; only then
 * 202.
 */

/** The sink a send key opened. */
export interface SendingSink {
  id: string;
  projectId: string;
  warehouseId: string;
  /** The sink's linger_ms: how long a send may wait for others to share its segment. */
  lingerMs: number;
  /** How the sink names a send without an Idempotency-Key (the send route names the batch before the intake sees it). */
  batchIds: BatchIds;
}

export interface IntakeDeps {
  pool: Pool;
  intake: ObjectStore;
  segments: SegmentWriter;
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
  body: StoredAnswer;
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

  const written = await deps.segments.write(sink, deps.intake, {
    claim: { sinkId: sink.id, batchId, hashes: body.hashes, bytes: ndjson.length, rows: objects, rejected: nonObjects, reasons: nonObjectIndexes },
    ndjson,
    projectId: sink.projectId,
    wireBytes: body.wireBytes,
  });
  if (written.kind === 'known') {
    const { claim } = written;
    if (claim.kind === 'sink_gone') throw sendKeyRefused();
    if (claim.kind === 'replay') return { status: 200, body: claim.response };
    if (claim.kind === 'conflict') {
      throw apiError('batch_id_conflict', {
        message: `Batch ${batchId} was already sent with a different body; send new data under a new Idempotency-Key.`,
        details: { batch_id: batchId },
      });
    }
    if (claim.kind === 'unknown') throw legacyRowMet(deps);
    throw apiError('batch_in_progress', {
      headers: { 'retry-after': String(RETRY_AFTER_SECONDS) },
      details: { batch_id: batchId, retry_after: RETRY_AFTER_SECONDS },
    });
  }

  const response: StoredAnswer = { accepted: objects, rejected: nonObjects, reasons, batch_id: batchId, bytes: ndjson.length, received_at: written.receivedAt, state: 'pending' };
  if (written.kind === 'settled') return { status: 202, body: response };
  // Nothing settled: the sink was deleted meanwhile, or a replay took the claim over and finished.
  const now = await throughDatabase(() => ledgerEntry(deps.pool, sink.id, batchId));
  if (!now?.live) {
    // Not accepted, so not kept: the delete's cleanup may have run before this object landed.
    // Every batch of the object is the deleted sink's, so the whole object goes.
    await deps.intake.deleteMany([written.key]).catch((error: unknown) => {
      deps.log.warn({ err: error, sink_id: sink.id, key: written.key }, "could not remove a deleted sink's intake object");
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

