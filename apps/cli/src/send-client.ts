import { Readable } from 'node:stream';
import zlib from 'node:zlib';
import { SendResult } from '@tablemere/contracts';
import { answerError, networkReason, parseJson } from './api-client.ts';
import type { Batch } from './batches.ts';
import { CliError, firstIssue } from './errors.ts';

/** Where a batch goes and with which key. */
export interface SendTarget {
  /** The sink's send route, `<api>/v1/sinks/<sink_id>`. */
  readonly ingestUrl: string;
  readonly sendKey: string;
  /** Compress bodies of COMPRESS_ABOVE_BYTES or more (the default); false: `--no-compress`. */
  readonly compress?: boolean;
}

/** Smaller bodies go as they are: a few packets, and the saving is not worth the header. */
export const COMPRESS_ABOVE_BYTES = 8 * 1024;

/** A batch's body as it goes over the wire, and its Content-Encoding when compressed. */
interface WireBody {
  readonly bytes: Buffer;
  readonly encoding?: 'zstd' | 'gzip';
}

/**
 * The body to send: compressed once per batch (not per attempt) when asked and large enough.
 * zstd (level 3) where this Node has it: about gzip's size at a fraction of the CPU on both
 * ends; gzip otherwise. The intake hashes the decoded body, so a batch sent compressed and
 * again uncompressed (`--no-compress`) under its id is a replay, not a conflict.
 */
export function wireBody(body: Buffer, compress: boolean): WireBody {
  if (!compress || body.length < COMPRESS_ABOVE_BYTES) return { bytes: body };
  if (typeof zlib.zstdCompressSync === 'function') return { bytes: zlib.zstdCompressSync(body), encoding: 'zstd' };
  return { bytes: zlib.gzipSync(body), encoding: 'gzip' };
}

/** The sink a target sends to: its send route's last segment. */
export const sinkIdOfTarget = (target: SendTarget): string => new URL(target.ingestUrl).pathname.split('/').at(-1) ?? '';

/**
 * How long to wait before each retry, in seconds, when the API gives no Retry-After: one entry
 * per retry, so the ladder's length bounds the attempts (seven in all, about a minute).
 */
export const RETRY_LADDER_SECONDS: readonly number[] = [1, 2, 4, 8, 15, 30];

/** A Retry-After above this is cut to it, so a send never sleeps for hours unattended. */
export const MAX_RETRY_AFTER_SECONDS = 300;

/**
 * A full backlog (429) asks each producer back at its turn, often after a second or two, and
 * room comes a roll at a time: past the ladder's attempts its refusals are retried until the
 * waits add up to this.
 */
export const BACKLOG_PATIENCE_SECONDS = 300;

/** One attempt may take this long: a 16 MiB body over a slow link, and the store's PUT. */
const ATTEMPT_TIMEOUT_MS = 120_000;

/** Bytes handed to the socket at a time, so progress moves within a batch. */
const SLICE_BYTES = 1024 * 1024;

export interface RetryNotice {
  readonly batch: Batch;
  /** The attempt that failed, 1-based. */
  readonly attempt: number;
  /** The attempts the ladder allows (a full backlog's refusals may take more: BACKLOG_PATIENCE_SECONDS). */
  readonly attempts: number;
  readonly waitSeconds: number;
  /** What went wrong, e.g. `503 store_unavailable` or `ECONNRESET`. */
  readonly reason: string;
  /** The failed attempt's error (with the API's code and message when it answered one). */
  readonly failure: CliError;
}

export interface SendHooks {
  /** Body bytes handed to the connection so far for this attempt (restarts at 0 on a retry). */
  onBytes?(batch: Batch, sent: number): void;
  onRetry?(notice: RetryNotice): void;
  /** Waits between attempts; tests pass a clock that does not sleep. */
  sleep?(ms: number): Promise<void>;
}

export interface SendOutcome {
  readonly result: SendResult;
  /** True when the intake already had this batch: it answered the first send's result (200). */
  readonly replay: boolean;
}

/**
 * Sends one batch, its id as the Idempotency-Key. The key makes every retry safe (a replay is
 * answered from the intake's ledger, never stored twice), so any failure without an answer,
 * any 5xx, 429 and 409 batch_in_progress is retried: after Retry-After when the API gives a
 * positive one, else after the next step of the ladder. Any other 4xx is final.
 */
export async function sendBatch(target: SendTarget, batch: Batch, hooks: SendHooks = {}): Promise<SendOutcome> {
  const sleep = hooks.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const attempts = RETRY_LADDER_SECONDS.length + 1;
  const operation = `POST ${new URL(target.ingestUrl).pathname} (batch ${batch.id})`;
  let waited = 0;
  const wire = wireBody(batch.body, target.compress ?? true);
  for (let attempt = 1; ; attempt++) {
    const outcome = await attemptSend(target, batch, wire, operation, hooks);
    if ('sent' in outcome) return outcome.sent;
    const { failure, retryAfter, reason, backlogFull } = outcome;
    const patient = backlogFull && retryAfter !== undefined && waited < BACKLOG_PATIENCE_SECONDS;
    if (failure.kind !== 'unavailable' || (attempt >= attempts && !patient)) throw failure;
    const waitSeconds = Math.min(retryAfter ?? RETRY_LADDER_SECONDS[attempt - 1]!, MAX_RETRY_AFTER_SECONDS);
    hooks.onRetry?.({ batch, attempt, attempts, waitSeconds, reason, failure });
    waited += waitSeconds;
    await sleep(waitSeconds * 1000);
  }
}

type Attempt = { sent: SendOutcome } | { failure: CliError; retryAfter: number | undefined; reason: string; backlogFull?: boolean };

async function attemptSend(target: SendTarget, batch: Batch, wire: WireBody, operation: string, hooks: SendHooks): Promise<Attempt> {
  let response: Response;
  let text: string;
  try {
    response = await fetch(target.ingestUrl, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${target.sendKey}`,
        'idempotency-key': batch.id,
        'content-type': 'application/json',
        ...(wire.encoding === undefined ? {} : { 'content-encoding': wire.encoding }),
        'content-length': String(wire.bytes.length),
        accept: 'application/json',
      },
      body: Readable.toWeb(Readable.from(slices(batch, wire.bytes, hooks))) as ReadableStream<Uint8Array>,
      duplex: 'half',
      signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
    } as RequestInit);
    text = await response.text();
  } catch (error) {
    const reason =
      error instanceof DOMException && error.name === 'TimeoutError' ? `no answer within ${ATTEMPT_TIMEOUT_MS / 1000} s` : networkReason(error);
    return {
      failure: new CliError('unavailable', `${operation}: cannot reach the intake at ${new URL(target.ingestUrl).origin} (${reason})`),
      retryAfter: undefined,
      reason,
    };
  }

  const body = parseJson(text);
  if (response.ok) {
    const parsed = SendResult.safeParse(body);
    if (!parsed.success) {
      return {
        failure: new CliError('unavailable', `unexpected_response: ${operation} answered a body tablemere cannot read (${firstIssue(parsed.error)})`),
        retryAfter: undefined,
        reason: `${response.status} unreadable answer`,
      };
    }
    return { sent: { result: parsed.data, replay: response.status === 200 } };
  }

  const failure = answerError(response, body, operation);
  const code = (body as { error?: { code?: unknown } } | undefined)?.error?.code;
  // 429 is the sink's backlog cap, and batch_in_progress an earlier attempt of this very batch
  // still being stored: the request was understood, and waiting is the remedy for both.
  const retryable = response.status === 429 || response.status >= 500 || code === 'batch_in_progress';
  return {
    failure: retryable ? new CliError('unavailable', failure.message, failure.detail) : failure,
    retryAfter: retryAfterSeconds(response.headers.get('retry-after'), new Date()),
    reason: `${response.status}${typeof code === 'string' ? ` ${code}` : ''}`,
    backlogFull: response.status === 429,
  };
}

/** The wire bytes in slices; progress is told in the batch's own bytes, so a compressed body moves the bar as far. */
function* slices(batch: Batch, bytes: Buffer, hooks: SendHooks): Generator<Buffer> {
  for (let at = 0; at < bytes.length; at += SLICE_BYTES) {
    const end = Math.min(at + SLICE_BYTES, bytes.length);
    yield bytes.subarray(at, end);
    hooks.onBytes?.(batch, Math.round((end / bytes.length) * batch.body.length));
  }
}

/**
 * A Retry-After header in seconds: delay-seconds or an HTTP date. Undefined when absent, not
 * positive, or unreadable, so the ladder decides instead.
 */
export function retryAfterSeconds(header: string | null, now: Date): number | undefined {
  if (header === null) return undefined;
  const text = header.trim();
  if (/^\d+$/.test(text)) {
    const seconds = Number(text);
    return seconds > 0 ? seconds : undefined;
  }
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  const seconds = Math.ceil((at - now.getTime()) / 1000);
  return seconds > 0 ? seconds : undefined;
}
