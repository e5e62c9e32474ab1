import type { IncomingMessage } from 'node:http';
import { type BatchIds, CONTENT_BATCH_ID_PREFIX, IDEMPOTENCY_KEY_PATTERN, REPLAY_WINDOW_DAYS, SEND_BODY_LIMIT, SEND_BODY_LIMIT_TEXT, SEND_NESTING_LIMIT, SEND_REASONS_LIMIT, SendBatch, SendParams, SendResult } from '@tablemere/contracts';
import { queryOne } from '@tablemere/db';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { BACKLOG_RETRY_AFTER } from '../../domain/intake/drain.ts';
import { BUSY_RETRY_AFTER_SECONDS, inFlightWeight } from '../../domain/intake/in-flight.ts';
import { bodyDigest, legacySha256, type LegacyDigests } from '../../domain/intake/body-digest.ts';
import { acceptBatch, type BodyFormat, type IntakeAnswer, type SendBody } from '../../domain/intake/accept.ts';
import { throughDatabase } from '../../domain/intake/unavailable.ts';
import type { BodyPool } from '../../http/body-pool.ts';
import { aborted, type Coding, CONTENT_CODINGS, contentCoding, readDecoded } from '../../http/content-encoding.ts';
import { senderOf, sendKeyScope } from '../../http/auth.ts';
import { apiError, RETRY_AFTER_SECONDS } from '../../errors.ts';
import type { RouteDoc } from '../../openapi/route-doc.ts';
import type { SinkRouteDeps } from './context.ts';

const sinkParam = (request: FastifyRequest) => (request.params as { sink: string }).sink;

/**
 * What the onRequest hook read and checked of a send's headers, for its body parser and its
 * handler: each header is parsed once per request.
 */
interface CheckedSend {
  /** The Idempotency-Key; undefined for a content sink's send without one, named by its body once read. */
  batchId: string | undefined;
  format: BodyFormat;
  coding: Coding | undefined;
  /** A compressed send's way to count more bytes in flight as its body decodes. */
  reserve: (bytes: number) => void;
  /** When the backlog check was answered: the batch is claimed after, so figures read before do not hold it. */
  backlogCheckedAt: number;
}
const checkedSends = new WeakMap<FastifyRequest, CheckedSend>();

/** The hook's reading of this send; it ran before any parser or handler of the route. */
function checkedSend(request: FastifyRequest): CheckedSend {
  const checked = checkedSends.get(request);
  if (checked === undefined) throw new Error('send route: the onRequest hook did not run');
  return checked;
}

const tooLarge = () =>
  apiError('body_too_large', {
    message: `The body is larger than ${SEND_BODY_LIMIT} bytes (${SEND_BODY_LIMIT_TEXT}); split the batch into smaller arrays.`,
    details: { limit_bytes: SEND_BODY_LIMIT },
  });

/** The batch id the Idempotency-Key gives; none on a `content` sink without one; else 400 idempotency_key_missing / idempotency_key_invalid. */
function idempotencyKey(request: FastifyRequest, batchIds: BatchIds): string | undefined {
  const value = request.headers['idempotency-key'];
  if (value === undefined || value === '') {
    if (batchIds === 'content') return undefined;
    throw apiError('idempotency_key_missing');
  }
  if (typeof value !== 'string' || !IDEMPOTENCY_KEY_PATTERN.test(value)) throw apiError('idempotency_key_invalid');
  return value;
}

/**
 * A batch named by its content: the prefix and the body digest's 32 hex. The digest is of the
 * decoded bytes (body-digest.ts), so a resend compressed another way, or not at all, is the
 * same batch, as the replay rule under a key has it; the same bytes as an array and as NDJSON
 * are two batches, as under a key.
 */
function contentBatchId(body: SendBody): string {
  return CONTENT_BATCH_ID_PREFIX + body.hashes.digest.toString('hex');
}

/** The body formats taken, by media type: a JSON array, or NDJSON (JSON Lines) under either of its names. */
const MEDIA_TYPES: Record<string, BodyFormat> = { 'application/json': 'array', 'application/x-ndjson': 'ndjson', 'application/jsonl': 'ndjson' };

/** The body's format from its Content-Type, in UTF-8 only (`charset=utf-8` or no charset); else 415. */
function bodyFormat(request: FastifyRequest): BodyFormat {
  const [essence = '', ...parameters] = (request.headers['content-type'] ?? '').split(';').map((part) => part.trim().toLowerCase());
  const charset = parameters.find((p) => p.startsWith('charset='))?.slice('charset='.length).replace(/"/g, '');
  const format = Object.hasOwn(MEDIA_TYPES, essence) ? MEDIA_TYPES[essence] : undefined;
  if (format === undefined || (charset !== undefined && charset !== 'utf-8')) {
    throw apiError('unsupported_media_type', {
      message: 'Send the batch as "Content-Type: application/json" (UTF-8): a JSON array of objects; or as "application/x-ndjson" (or "application/jsonl"): one JSON object per line.',
    });
  }
  return format;
}

/**
 * Reads the body into one buffer and never past SEND_BODY_LIMIT: a declared Content-Length
 * over it is refused before a byte is read, and a body without one is cut off as it passes
 * the limit. With a Content-Length the buffer is taken once at its size (from `pool` when
 * large; the route gives it back when the send is done). A compressed body is decompressed
 * as it arrives, the limit on its decoded bytes (content-encoding.ts). The digest is of the
 * decoded bytes (body-digest.ts); the SHA-256 of them, when still needed, is fed chunk by chunk.
 */
function readBody(request: FastifyRequest, payload: IncomingMessage, pool: BodyPool, legacy: LegacyDigests): Promise<SendBody> {
  const { format, coding, reserve } = checkedSend(request);
  const header = request.headers['content-length'];
  const declared = header === undefined ? undefined : Number(header);
  if (declared !== undefined && declared > SEND_BODY_LIMIT) return Promise.reject(tooLarge());
  const hash = legacy.sha256Needed ? legacySha256(format) : undefined;
  const sendBody = (bytes: Buffer, wireBytes: number): SendBody => ({
    bytes,
    hashes: { digest: bodyDigest(bytes, format), ...(hash ? { sha256: hash.digest() } : {}) },
    format,
    wireBytes,
  });
  if (coding !== undefined) {
    return readDecoded(payload, coding, { limit: SEND_BODY_LIMIT, tooLarge, hash, pool, reserved: inFlightWeight(header), reserve }).then(({ bytes, wireBytes }) => sendBody(bytes, wireBytes));
  }
  const whole = declared !== undefined && Number.isSafeInteger(declared) && declared >= 0 ? pool.take(declared) : undefined;
  const chunks: Buffer[] = [];
  let received = 0;
  let ended = false;
  // Set once the body is answered either way: the buffer is given back once, and never once the route has it.
  let settled = false;
  return new Promise((resolve, reject) => {
    const stop = (error: unknown) => {
      payload.removeListener('data', onData);
      if (settled) return;
      settled = true;
      if (whole) pool.give(whole);
      // Drain what is still coming (the connection closes after the answer) instead of keeping it.
      payload.resume();
      reject(error);
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > SEND_BODY_LIMIT) return stop(tooLarge());
      hash?.update(chunk);
      if (whole) {
        if (received > whole.length) return stop(apiError('invalid_request', { message: 'The body is longer than its Content-Length.' }));
        chunk.copy(whole, received - chunk.length);
      } else {
        chunks.push(chunk);
      }
    };
    payload.on('data', onData);
    payload.once('end', () => {
      ended = true;
      if (whole && received !== whole.length) return stop(apiError('invalid_request', { message: 'The body is shorter than its Content-Length.' }));
      if (settled) return;
      settled = true;
      resolve(sendBody(whole ?? Buffer.concat(chunks, received), received));
    });
    payload.once('error', stop);
    payload.once('close', () => {
      if (!ended) stop(aborted());
    });
  });
}

/** The `batch_ids` setting and its trade, as the send, create and PATCH routes tell it. */
export const BATCH_IDS_TEXT = `\`batch_ids\` is how a send without \`Idempotency-Key\` is named: \`key\` (default) refuses it (400 \`idempotency_key_missing\`); \`content\` names it by its body, so a resend of the same body is a replay (200, the first answer), never a second batch. The trade: two identical bodies within the replay window (${REPLAY_WINDOW_DAYS} days after the roll) are one batch. Choose \`content\` for shippers that resend whole batches and cannot set a header per request (Vector, Fluent Bit, Telegraf); keep \`key\` where identical bodies are legitimately sent twice (a sensor repeating the same reading). A send with a key is named by its key either way.`;

const EXAMPLE_RESULT = { accepted: 2, rejected: 0, reasons: [], batch_id: '2026-09-21T12:00:00Z-0001', batch_id_from: 'key', bytes: 33, received_at: '2026-09-21T12:00:00.123456Z', state: 'pending' };

/** The send route as a device author reads it: headers, body rules, every answer, when to retry. */
const SEND_DOC: RouteDoc = {
  id: 'sendBatch',
  tag: 'send',
  summary: "Send a batch of rows to a sink's table",
  description: [
    "The intake of one table. Authenticate with the sink's send key (`Authorization: Bearer tm_send_...`), name the batch with `Idempotency-Key` (or let its body name it, on a sink with `batch_ids: content`), and POST the rows in UTF-8 as a JSON array of row objects (`Content-Type: application/json`) or as NDJSON, one JSON object per line (`application/x-ndjson` or `application/jsonl`; blank lines and a final line break allowed). The batch is stored unchanged, one element per line, the same bytes whichever way it came, and 202 is answered only once it is durable (object stored and ledger row written). The roller appends it to the table within the sink's roll policy, stamping `__ingest_ts` with `received_at`.",
    `The body may be compressed: \`Content-Encoding: gzip\`, \`deflate\` (zlib), \`zstd\` or \`identity\`, one coding (a coding inside another is 415 \`unsupported_encoding\`, as is any other). The limit of ${SEND_BODY_LIMIT} bytes is on the decompressed body, enforced while decompressing: a body that decompresses past it is 413 \`body_too_large\` as soon as it does. A stream that does not decompress (corrupt, cut short) is 400 \`invalid_compressed_body\`. Usage counts the stored bytes and, beside them, the bytes sent.`,
    `Checked in this order, nothing read past the first failure: the send key (401 \`unauthorized\` without one, or with another sink's, a deleted sink's or a wrong one; 403 \`send_only\` for an API key or any other token); \`Idempotency-Key\` (400; none at all is allowed on a \`batch_ids: content\` sink); \`Content-Type\` (415 \`unsupported_media_type\`); \`Content-Encoding\` (415 \`unsupported_encoding\`); the bytes of bodies in flight (503 \`intake_busy\`, \`Retry-After: ${BUSY_RETRY_AFTER_SECONDS}\`; a compressed body counts its \`Content-Length\`, then its decompressed bytes as they grow, and may be refused so while it decompresses); the sink's backlog of stored, not yet rolled batches (429 \`backlog_full\`, \`Retry-After\` from the sink's drain rate); then the body: at most ${SEND_BODY_LIMIT} bytes (${SEND_BODY_LIMIT_TEXT}; a larger \`Content-Length\` is refused before a byte is read, 413), valid JSON nested at most ${SEND_NESTING_LIMIT} deep (400 \`invalid_json\`; for NDJSON the error names the \`line\`), an array (400 \`not_an_array\`) with at least one element (400 \`empty_batch\`; an NDJSON body of blank lines too).`,
    `Every element is stored: an element that is not an object is counted in \`rejected\` (its index in \`reasons\`, the first ${SEND_REASONS_LIMIT}, with its \`line\` for NDJSON) and the roll writes it to the rejects file as \`not_an_object\`. Rows that do not fit the table's schema are rejected by the roll, row by row, never the batch: read them with GET /v1/sinks/{sink}/rejects.`,
    `Idempotency: the same \`Idempotency-Key\` with the same body answers 200 with the first answer and \`Idempotent-Replayed: true\`, whatever happened since; with another body, 409 \`batch_id_conflict\`. The same body is the same decompressed bytes in the same format: compressed or not, it is a replay; an NDJSON body and an array body are never the same batch, even of the same rows (409); while the first request with that id is still being stored, 409 \`batch_in_progress\`. Ledger rows are pruned ${REPLAY_WINDOW_DAYS} days after their roll, after which the same id is accepted again. So: give every batch a new id, and send a batch again under the same id whenever its answer was lost.`,
    `${BATCH_IDS_TEXT} A content-named batch's id is \`${CONTENT_BATCH_ID_PREFIX}\` and the 32 hex digits of the body's XXH3-128 digest, the one that tells a replay: of the decompressed bytes, in their format, so a resend compressed another way or not at all is the same batch, and an array and NDJSON body are two. \`batch_id_from\` in the answer, a replay's too, says whether this request's key or its content named the batch. On a full backlog a send without a key is refused (429) even when it would be a replay, its id unknown until the body is read.`,
    `Retry on 409 \`batch_in_progress\`, 429 and 503 after \`Retry-After\` seconds (${BUSY_RETRY_AFTER_SECONDS} for \`intake_busy\`, ${BACKLOG_RETRY_AFTER.min}-${BACKLOG_RETRY_AFTER.max} for \`backlog_full\`, ${RETRY_AFTER_SECONDS} otherwise), and on a lost connection or another 5xx after a growing pause; always with the same \`Idempotency-Key\` and body, so nothing is stored twice. A \`backlog_full\` Retry-After follows the sink's drain rate: each refused producer is asked back at its turn as the roller makes room, so a fleet comes back spread out, at about the rate its batches are rolled (the figures are in the error's details). A 503 \`intake_unavailable\` stored nothing. Other 4xx answers will not change on a retry: fix the request.`,
  ].join('\n\n'),
  params: SendParams,
  paramDescriptions: { sink: "The sink's id (`snk_` and 12 hex, as in its `ingest_url`); its name is not accepted here" },
  headers: {
    'Idempotency-Key': {
      description: 'The batch id: 1-128 of `A-Z a-z 0-9 . _ : -`. The same id with the same body is a replay (200), never stored twice. Required unless the sink has `batch_ids: content`, where a send without it is named by its body.',
      required: false,
      schema: { type: 'string', pattern: IDEMPOTENCY_KEY_PATTERN.source },
      example: '2026-09-21T12:00:00Z-0001',
    },
    'Content-Encoding': {
      description: `Optional: \`gzip\`, \`deflate\`, \`zstd\` or \`identity\`, one coding. The ${SEND_BODY_LIMIT_TEXT} limit is on the decompressed body.`,
      schema: { type: 'string', enum: [...CONTENT_CODINGS] },
      example: 'gzip',
    },
  },
  body: {
    schema: SendBatch,
    description: `A JSON array of row objects, at most ${SEND_BODY_LIMIT} bytes (${SEND_BODY_LIMIT_TEXT}), keys the table's column names. Values: timestamps as RFC 3339 strings, dates as YYYY-MM-DD, decimals as strings or numbers, binary as base64, structs, lists and maps as JSON; integers beyond 2^53 are kept exactly.`,
    examples: {
      rows: { summary: 'Two rows', value: [{ x: 1, who: 'north' }, { x: 2 }] },
    },
    textTypes: {
      'application/x-ndjson': { description: 'NDJSON: one JSON object per line, UTF-8; blank lines and a final line break allowed. Each line is stored as an array element is.', example: '{"x": 1, "who": "north"}\n{"x": 2}\n' },
      'application/jsonl': { description: 'The same as application/x-ndjson, under its other name.', example: '{"x": 1, "who": "north"}\n{"x": 2}\n' },
    },
  },
  answers: {
    202: {
      description: 'Stored durably and recorded; the roller appends it within the roll policy.',
      schema: SendResult,
      examples: {
        stored: { summary: 'Two rows stored', value: EXAMPLE_RESULT },
        by_content: {
          summary: 'Sent without Idempotency-Key to a `batch_ids: content` sink: named by its body',
          value: { ...EXAMPLE_RESULT, batch_id: `${CONTENT_BATCH_ID_PREFIX}9f86d081884c7d659a2feaa0c55ad015`, batch_id_from: 'content' },
        },
        not_an_object: {
          summary: 'An element that is not an object is stored and counted as rejected',
          value: { ...EXAMPLE_RESULT, accepted: 1, rejected: 1, reasons: [{ index: 1, reason: 'not_an_object' }], bytes: 10 },
        },
      },
    },
    200: {
      description: 'A replay: this batch id was already stored with this body; the first answer, unchanged. Nothing new was stored.',
      schema: SendResult,
      headers: { 'Idempotent-Replayed': { description: 'Always `true` on a replay.', schema: { type: 'string', const: 'true' } } },
      examples: { replay: { summary: 'The first answer again', value: EXAMPLE_RESULT } },
    },
  },
  errors: ['idempotency_key_missing', 'idempotency_key_invalid', 'invalid_compressed_body', 'not_an_array', 'empty_batch', 'batch_id_conflict', 'batch_in_progress', 'quota_exceeded', 'backlog_full', 'intake_unavailable', 'intake_busy', 'unsupported_encoding'],
};

/**
 * POST /v1/sinks/{sink_id}: the send route. Before a byte of the body is read: the send key
 * (scope hook), the Idempotency-Key, the content type, the caps on body bytes in flight, the
 * backlog cap. Then the body (at most 16 MiB), and the intake (domain/intake/accept.ts).
 */
export function sendBatch(app: FastifyInstance, deps: SinkRouteDeps): void {
  app.register(
    sendKeyScope(deps.sendKeys, sinkParam, (scope) => {
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser(Object.keys(MEDIA_TYPES), (request: FastifyRequest, payload: IncomingMessage) => readBody(request, payload, deps.bodies, deps.legacyDigests));
      scope.addHook('onRequest', async (request, reply) => {
        const sink = senderOf(request);
        const batchId = idempotencyKey(request, sink.batchIds);
        const format = bodyFormat(request);
        const coding = contentCoding(request.headers['content-encoding']);
        // Held until the answer is sent or the connection is gone, whichever comes first. A
        // compressed body counts its Content-Length first, and more as it decodes.
        let held = inFlightWeight(request.headers['content-length']);
        reply.raw.once('close', deps.inFlight.enter(sink.id, held));
        const reserve = (bytes: number) => {
          reply.raw.once('close', deps.inFlight.enter(sink.id, bytes, held));
          held += bytes;
        };
        const checked: CheckedSend = { batchId, format, coding, reserve, backlogCheckedAt: 0 };
        checkedSends.set(request, checked);
        const full = await throughDatabase(() => deps.backlog.isFull(sink.id));
        checked.backlogCheckedAt = Date.now();
        if (full) {
          // A replay or a conflicting id is answered as such, whatever the backlog. A send named
          // by its content has no id until its body is read, which is what the cap spares: it is
          // refused, and a retry once there is room is answered as the replay it may be.
          const known =
            batchId !== undefined &&
            (await throughDatabase(() => queryOne(deps.pool, 'SELECT 1 FROM sink_batches WHERE sink_id = $1 AND batch_id = $2', [sink.id, batchId])));
          if (!known) throw await throughDatabase(() => deps.backlog.refusal(sink.id));
        }
      });
      scope.post('/v1/sinks/:sink', { config: { accessLog: false, openapi: SEND_DOC } }, async (request, reply): Promise<SendResult> => {
        const sink = senderOf(request);
        const checked = checkedSend(request);
        // No body at all (no parser ran) is an empty one: invalid JSON below.
        const body = (request.body as SendBody | undefined) ?? { bytes: Buffer.alloc(0), hashes: { digest: bodyDigest(Buffer.alloc(0), checked.format) }, format: checked.format, wireBytes: 0 };
        const batchId = checked.batchId ?? contentBatchId(body);
        let answer: IntakeAnswer;
        try {
          answer = await acceptBatch(
            { pool: deps.pool, intake: await throughDatabase(() => deps.intakes.of(sink.warehouseId)), segments: deps.segments, legacyDigests: deps.legacyDigests, log: request.log },
            sink,
            batchId,
            body,
          );
        } finally {
          deps.bodies.give(body.bytes);
        }
        if (answer.status === 202) {
          deps.backlog.added(sink.id, answer.body.bytes, checked.backlogCheckedAt);
          deps.metrics.intakeAccepted({ bytes: answer.body.bytes, rows: answer.body.accepted, rejected: answer.body.rejected });
        } else {
          void reply.header('idempotent-replayed', 'true');
        }
        void reply.status(answer.status);
        // From the request, not the ledger row: the answer says how this send named its batch.
        return { ...answer.body, batch_id_from: checked.batchId === undefined ? 'content' : 'key' };
      });
    }),
  );
}
