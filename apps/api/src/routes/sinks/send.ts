import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { IDEMPOTENCY_KEY_PATTERN, SEND_BODY_LIMIT, type SendResult } from '@tablemere/contracts';
import { queryOne } from '@tablemere/db';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { backlogFull } from '../../domain/intake-backlog.ts';
import { inFlightWeight } from '../../domain/intake-in-flight.ts';
import { acceptBatch, throughDatabase, type IntakeAnswer, type SendBody } from '../../domain/intake.ts';
import type { BodyPool } from '../../http/body-pool.ts';
import { senderOf, sendKeyScope } from '../../http/auth.ts';
import { apiError } from '../../errors.ts';
import type { SinkRouteDeps } from './context.ts';

const sinkParam = (request: FastifyRequest) => (request.params as { sink: string }).sink;

const tooLarge = () =>
  apiError('body_too_large', {
    message: `The body is larger than ${SEND_BODY_LIMIT} bytes (16 MiB); split the batch into smaller arrays.`,
    details: { limit_bytes: SEND_BODY_LIMIT },
  });

/** The batch id, or 400 idempotency_key_missing / idempotency_key_invalid. */
function idempotencyKey(request: FastifyRequest): string {
  const value = request.headers['idempotency-key'];
  if (value === undefined || value === '') throw apiError('idempotency_key_missing');
  if (typeof value !== 'string' || !IDEMPOTENCY_KEY_PATTERN.test(value)) throw apiError('idempotency_key_invalid');
  return value;
}

/** JSON in UTF-8 only: `application/json`, with `charset=utf-8` or no charset. */
function requireJson(request: FastifyRequest): void {
  const [essence = '', ...parameters] = (request.headers['content-type'] ?? '').split(';').map((part) => part.trim().toLowerCase());
  const charset = parameters.find((p) => p.startsWith('charset='))?.slice('charset='.length).replace(/"/g, '');
  if (essence !== 'application/json' || (charset !== undefined && charset !== 'utf-8')) {
    throw apiError('unsupported_media_type', { message: 'Send the batch as "Content-Type: application/json" (UTF-8): a JSON array of objects.' });
  }
}

/**
 * Reads the body into one buffer and never past SEND_BODY_LIMIT: a declared Content-Length
 * over it is refused before a byte is read, and a body without one is cut off as it passes
 * the limit. With a Content-Length the buffer is taken once at its size (from `pool` when
 * large; the route gives it back when the send is done). The SHA-256 is
 * computed chunk by chunk as the body arrives, not in a second pass.
 */
function readBody(request: FastifyRequest, payload: IncomingMessage, pool: BodyPool): Promise<SendBody> {
  const header = request.headers['content-length'];
  const declared = header === undefined ? undefined : Number(header);
  if (declared !== undefined && declared > SEND_BODY_LIMIT) return Promise.reject(tooLarge());
  const whole = declared !== undefined && Number.isSafeInteger(declared) && declared >= 0 ? pool.take(declared) : undefined;
  const chunks: Buffer[] = [];
  const hash = createHash('sha256');
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
      hash.update(chunk);
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
      resolve({ bytes: whole ?? Buffer.concat(chunks, received), sha256: hash.digest() });
    });
    payload.once('error', stop);
    payload.once('close', () => {
      if (!ended) stop(apiError('client_aborted', { message: 'The connection closed before the body\'s end; nothing was stored: send it again.' }));
    });
  });
}

/**
 * POST /v1/sinks/{sink_id}: the send route. Before a byte of the body is read: the send key
 * (scope hook), the Idempotency-Key, the content type, the caps on body bytes in flight, the
 * backlog cap. Then the body (at most 16 MiB), and the intake (domain/intake.ts).
 */
export function sendBatch(app: FastifyInstance, deps: SinkRouteDeps): void {
  app.register(
    sendKeyScope(deps.sendKeys, sinkParam, (scope) => {
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser('application/json', (request: FastifyRequest, payload: IncomingMessage) => readBody(request, payload, deps.bodies));
      scope.addHook('onRequest', async (request, reply) => {
        const batchId = idempotencyKey(request);
        requireJson(request);
        const sink = senderOf(request);
        // Held until the answer is sent or the connection is gone, whichever comes first.
        reply.raw.once('close', deps.inFlight.enter(sink.id, inFlightWeight(request.headers['content-length'])));
        if (await throughDatabase(() => deps.backlog.isFull(sink.id))) {
          // A replay or a conflicting id is answered as such, whatever the backlog.
          const known = await throughDatabase(() =>
            queryOne(deps.pool, 'SELECT 1 FROM sink_batches WHERE sink_id = $1 AND batch_id = $2', [sink.id, batchId]),
          );
          if (!known) throw backlogFull(sink.id, deps.backlog.limits);
        }
      });
      scope.post('/v1/sinks/:sink', { config: { accessLog: false } }, async (request, reply): Promise<SendResult> => {
        const sink = senderOf(request);
        // No body at all (no parser ran) is an empty one: invalid JSON below.
        const body = (request.body as SendBody | undefined) ?? { bytes: Buffer.alloc(0), sha256: createHash('sha256').digest() };
        let answer: IntakeAnswer;
        try {
          answer = await acceptBatch({ pool: deps.pool, intake: await throughDatabase(() => deps.intakes.of(sink.warehouseId)), claims: deps.claims, settler: deps.settler, log: request.log }, sink, idempotencyKey(request), body);
        } finally {
          deps.bodies.give(body.bytes);
        }
        if (answer.status === 202) {
          deps.backlog.added(sink.id, answer.body.bytes);
          deps.metrics.intakeAccepted({ bytes: answer.body.bytes, rows: answer.body.accepted, rejected: answer.body.rejected });
        } else {
          void reply.header('idempotent-replayed', 'true');
        }
        void reply.status(answer.status);
        return answer.body;
      });
    }),
  );
}
