import {
  ErrorBody,
  InternalSinkList,
  Lease,
  LeaseRelease,
  RollIntent,
  RollList,
  RollErrorResult,
  RollReportResult,
  SinkStateResult,
  UpkeepReportResult,
  type LeaseRequest,
  type RollErrorRequest,
  type RollIntentRequest,
  type RollReport,
  type RollState,
  type SinkStateRequest,
  type UpkeepReport,
} from '@tablemere/contracts';
import http from 'node:http';
import https from 'node:https';
import type { z } from 'zod';

/**
 * What went wrong talking to the internal API, as a closed set. `code` is the API's error
 * code when it answered with one (lease_held, lease_lost, roll_conflict, upkeep_conflict, sink_not_found, ...).
 */
export type InternalApiErrorKind =
  /** No answer, a timeout, or a 5xx: the same call may work later. */
  | 'unavailable'
  /** The bootstrap secret was refused. */
  | 'unauthorized'
  /** The API's TLS certificate was refused (an unknown CA, another host's name, expired): not retried. */
  | 'certificate'
  /** A 4xx with an error code. */
  | 'refused'
  /** A 2xx whose body does not match the contract. */
  | 'bad_response';

export class InternalApiError extends Error {
  override readonly name = 'InternalApiError';
  constructor(
    readonly kind: InternalApiErrorKind,
    message: string,
    readonly status: number | undefined = undefined,
    readonly code: string | undefined = undefined,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

export function isApiRefusal(error: unknown, code: string): error is InternalApiError {
  return error instanceof InternalApiError && error.kind === 'refused' && error.code === code;
}

export interface InternalApiOptions {
  /** e.g. `http://127.0.0.1:8789` */
  url: string;
  /** TABLEMERE_BOOTSTRAP_SECRET */
  secret: string;
  /** PEM certificates trusted for an https:// `url` instead of the system's (TABLEMERE_INTERNAL_CA_FILE). */
  ca?: string;
  /** Bound of one call, its retries included (TABLEMERE_ROLLER_CALL_TIMEOUT_SECONDS); default 10 s. */
  timeoutMs?: number;
  /** Attempts for calls that fail as `unavailable`, within the bound; every call here is safe to repeat. */
  attempts?: number;
}

/** A retry is not started with less of the bound left than this. */
const MIN_ATTEMPT_MS = 500;

const sinkPath = (sinkId: string) => `/internal/sinks/${encodeURIComponent(sinkId)}`;

/**
 * The roller's client of the API's internal listener. Requests and answers are checked
 * against the zod contracts both sides share. Every route it calls is idempotent by
 * contract (a repeated intent or report answers the recorded one), so transient failures
 * are retried a few times.
 */
export class InternalApi {
  private readonly timeoutMs: number;
  private readonly attempts: number;
  private readonly agent: http.Agent;

  constructor(private readonly options: InternalApiOptions) {
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.attempts = options.attempts ?? 3;
    this.agent = agentFor(options);
  }

  /** Closes the idle connections to the API (a stopping process). */
  close(): void {
    this.agent.destroy();
  }

  get url(): string {
    return this.options.url;
  }

  listSinks(query: { due?: boolean; sink?: string; limit?: number } = {}) {
    const params = new URLSearchParams();
    if (query.due !== undefined) params.set('due', String(query.due));
    if (query.sink !== undefined) params.set('sink', query.sink);
    if (query.limit !== undefined) params.set('limit', String(query.limit));
    const search = params.size > 0 ? `?${params}` : '';
    return this.call('GET', `/internal/sinks${search}`, undefined, InternalSinkList);
  }

  lease(sinkId: string, request: LeaseRequest) {
    return this.call('POST', `${sinkPath(sinkId)}/lease`, request, Lease);
  }

  releaseLease(sinkId: string, leaseId: string) {
    return this.call('DELETE', `${sinkPath(sinkId)}/lease/${encodeURIComponent(leaseId)}`, undefined, LeaseRelease);
  }

  recordIntent(sinkId: string, request: RollIntentRequest) {
    return this.call('POST', `${sinkPath(sinkId)}/rolls`, request, RollIntent);
  }

  async listRolls(sinkId: string, state: RollState, limit = 1000) {
    return (await this.call('GET', `${sinkPath(sinkId)}/rolls?state=${state}&limit=${limit}`, undefined, RollList)).rolls;
  }

  report(sinkId: string, report: RollReport) {
    return this.call('POST', `${sinkPath(sinkId)}/roll`, report, RollReportResult);
  }

  reportUpkeep(sinkId: string, report: UpkeepReport) {
    return this.call('POST', `${sinkPath(sinkId)}/upkeep`, report, UpkeepReportResult);
  }

  setRollError(sinkId: string, request: RollErrorRequest) {
    return this.call('PUT', `${sinkPath(sinkId)}/roll-error`, request, RollErrorResult);
  }

  setState(sinkId: string, request: SinkStateRequest) {
    return this.call('PUT', `${sinkPath(sinkId)}/state`, request, SinkStateResult);
  }

  /**
   * One call, bounded by `timeoutMs` as a whole: an attempt that failed as `unavailable` is
   * tried again (up to `attempts`) only with time left in the bound, and gets only what is left,
   * so the roller never waits on an API out of reach much longer than the bound.
   */
  private async call<S extends z.ZodType>(method: string, path: string, body: unknown, schema: S): Promise<z.infer<S>> {
    const deadline = Date.now() + this.timeoutMs;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.once(method, path, body, schema, Math.max(1, deadline - Date.now()));
      } catch (error) {
        const pause = 250 * 2 ** (attempt - 1);
        const retry = error instanceof InternalApiError && error.kind === 'unavailable' && attempt < this.attempts && Date.now() + pause + MIN_ATTEMPT_MS <= deadline;
        if (!retry) throw error;
        await new Promise((resolve) => setTimeout(resolve, pause));
      }
    }
  }

  private async once<S extends z.ZodType>(method: string, path: string, body: unknown, schema: S, timeoutMs: number): Promise<z.infer<S>> {
    const what = `${method} ${path.split('?')[0]}`;
    let response: { status: number; ok: boolean; text: string };
    try {
      response = await send(`${this.options.url}${path}`, this.agent, {
        method,
        headers: {
          authorization: `Bearer ${this.options.secret}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const reason = error instanceof Error ? error.message : String(error);
      if (code !== undefined && CERTIFICATE_ERROR.test(code)) {
        throw new InternalApiError(
          'certificate',
          `${what}: the internal API's TLS certificate at ${this.options.url} was refused (${code}: ${reason}); ` +
            (this.options.ca === undefined
              ? 'set TABLEMERE_INTERNAL_CA_FILE to the CA that signed it, or fix the certificate'
              : 'check that TABLEMERE_INTERNAL_CA_FILE holds the CA that signed it and that the certificate names the host of TABLEMERE_INTERNAL_URL'),
        );
      }
      throw new InternalApiError('unavailable', `${what}: no answer from the internal API at ${this.options.url} (${reason})`);
    }
    const { text } = response;
    const json = parseOrUndefined(text);
    if (!response.ok) {
      const parsed = ErrorBody.safeParse(json);
      const code = parsed.success ? parsed.data.error.code : undefined;
      const { code: _, message, ...details } = parsed.success ? parsed.data.error : { code: undefined, message: text.slice(0, 200) };
      const kind: InternalApiErrorKind = response.status === 401 ? 'unauthorized' : response.status >= 500 ? 'unavailable' : 'refused';
      throw new InternalApiError(kind, `${what}: ${response.status}${code ? ` ${code}` : ''}: ${message}`, response.status, code, details);
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      throw new InternalApiError('bad_response', `${what}: the answer does not match the contract: ${parsed.error.issues.slice(0, 3).map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`, response.status);
    }
    return parsed.data;
  }
}

/** OpenSSL's verification failures (UNABLE_TO_VERIFY_LEAF_SIGNATURE, SELF_SIGNED_CERT_IN_CHAIN, CERT_HAS_EXPIRED, ...) and Node's host name check. */
const CERTIFICATE_ERROR = /CERT|ISSUER|SIGNATURE|ERR_TLS_CERT_ALTNAME_INVALID/;

/**
 * The connections to the API, kept alive between calls. An https:// URL is always verified: by
 * `ca` when given, else by the system's CAs. Idle connections are closed after 4 s, well before
 * the API closes them, so a call is not sent on a connection the API is closing.
 */
function agentFor(options: InternalApiOptions): http.Agent {
  const common = { keepAlive: true, timeout: 4_000 };
  if (!options.url.startsWith('https:')) return new http.Agent(common);
  return new https.Agent({ ...common, rejectUnauthorized: true, ...(options.ca === undefined ? {} : { ca: options.ca }) });
}

/** One request and its whole answer as text, over `agent`; rejects when `signal` aborts it, the answer included. */
function send(
  url: string,
  agent: http.Agent,
  request: { method: string; headers: Record<string, string>; body: string | undefined; signal: AbortSignal },
): Promise<{ status: number; ok: boolean; text: string }> {
  const transport = url.startsWith('https:') ? https : http;
  const payload = request.body === undefined ? undefined : Buffer.from(request.body, 'utf8');
  return new Promise((resolve, reject) => {
    const req = transport.request(
      url,
      {
        method: request.method,
        agent,
        signal: request.signal,
        headers: { ...request.headers, ...(payload === undefined ? {} : { 'content-length': String(payload.length) }) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          resolve({ status, ok: status >= 200 && status < 300, text: Buffer.concat(chunks).toString('utf8') });
        });
        res.on('error', reject);
        res.on('aborted', () => reject(new Error('the answer was cut off')));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

function parseOrUndefined(text: string): unknown {
  try {
    return text === '' ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}
