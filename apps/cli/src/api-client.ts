import { LosslessNumber, parse as parseLossless, stringify as stringifyLossless } from 'lossless-json';
import { z } from 'zod';
import type { ApiConfig } from './config.ts';
import { CliError, firstIssue } from './errors.ts';

/** Long enough for a create-table that waits on the catalog, short enough not to hang a script. */
const defaultTimeoutMs = 30_000;

// The error envelope every non-2xx answer carries; details beyond code and message vary.
const errorBodySchema = z.object({
  error: z.looseObject({ code: z.string(), message: z.string() }),
});

/** A parsed answer, with the body as sent for `--json`. */
export interface ApiAnswer<T> {
  readonly value: T;
  readonly body: unknown;
}

type Query = Readonly<Record<string, string | undefined>>;

/** The tablemere API over HTTP: bearer auth, a timeout, answers checked against the contracts. */
export class ApiClient {
  constructor(
    private readonly config: ApiConfig,
    private readonly timeoutMs = defaultTimeoutMs,
  ) {}

  get<S extends z.ZodType>(path: string, schema: S, query: Query = {}): Promise<ApiAnswer<z.output<S>>> {
    return this.send('GET', path, query, undefined, schema, parseJson);
  }

  /**
   * A GET whose answer carries producers' rows: numbers JavaScript cannot hold exactly stay
   * LosslessNumber (print them with `exactJson`), the rest are plain numbers for the schema.
   */
  getExact<S extends z.ZodType>(path: string, schema: S, query: Query = {}): Promise<ApiAnswer<z.output<S>>> {
    return this.send('GET', path, query, undefined, schema, parseExact);
  }

  post<S extends z.ZodType>(path: string, body: unknown, schema: S, query: Query = {}): Promise<ApiAnswer<z.output<S>>> {
    return this.send('POST', path, query, body, schema, parseJson);
  }

  patch<S extends z.ZodType>(path: string, body: unknown, schema: S): Promise<ApiAnswer<z.output<S>>> {
    return this.send('PATCH', path, {}, body, schema, parseJson);
  }

  delete<S extends z.ZodType>(path: string, schema: S): Promise<ApiAnswer<z.output<S>>> {
    return this.send('DELETE', path, {}, undefined, schema, parseJson);
  }

  private async send<S extends z.ZodType>(
    method: string,
    path: string,
    query: Query,
    requestBody: unknown,
    schema: S,
    parseBody: (text: string) => unknown,
  ): Promise<ApiAnswer<z.output<S>>> {
    const operation = `${method} ${path}`;
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.config.apiKey}`,
      accept: 'application/json',
    };
    if (requestBody !== undefined) headers['content-type'] = 'application/json';

    let response: Response;
    let text: string;
    try {
      response = await fetch(this.url(path, query), {
        method,
        headers,
        body: requestBody === undefined ? undefined : JSON.stringify(requestBody),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      text = await response.text();
    } catch (error) {
      throw this.unreachable(error);
    }

    const body = parseBody(text);
    if (!response.ok) throw answerError(response, body, operation);
    const parsed = schema.safeParse(body);
    if (!parsed.success) {
      throw new CliError('unavailable', `unexpected_response: ${operation} answered a body tablemere cannot read (${firstIssue(parsed.error)})`);
    }
    return { value: parsed.data, body };
  }

  private url(path: string, query: Query): string {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, value);
    const search = params.size > 0 ? `?${params}` : '';
    return `${this.config.apiUrl}${path}${search}`;
  }

  private unreachable(error: unknown): CliError {
    const where = `the API at ${this.config.apiUrl}`;
    if (error instanceof DOMException && error.name === 'TimeoutError') {
      return new CliError('unavailable', `${where} did not answer within ${this.timeoutMs / 1000} s`);
    }
    return new CliError('unavailable', `cannot reach ${where} (${networkReason(error)})`);
  }
}

/** An error answer: 4xx is a refusal (exit 1), anything else is the API failing (exit 3). */
export function answerError(response: Response, body: unknown, operation: string): CliError {
  const kind = response.status >= 400 && response.status < 500 ? 'refused' : 'unavailable';
  const envelope = errorBodySchema.safeParse(body);
  if (!envelope.success) {
    return new CliError(kind, `http_${response.status}: ${operation} answered ${response.status} ${response.statusText}`.trimEnd());
  }
  const { code, message } = envelope.data.error;
  const retryAfter = response.headers.get('retry-after');
  const hint = kind === 'unavailable' && retryAfter ? ` (retry after ${retryAfter} s)` : '';
  return new CliError(kind, `${code}: ${message}${hint}`, { code, message });
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A number as a JavaScript number when that loses nothing (`7`, `0.5`), else kept as written. */
const exactNumber = (text: string): number | LosslessNumber => (String(Number(text)) === text ? Number(text) : new LosslessNumber(text));

function parseExact(text: string): unknown {
  try {
    return parseLossless(text, null, exactNumber);
  } catch {
    return undefined;
  }
}

/** JSON text of a value read by `getExact`, every number as the API sent it; indented when asked. */
export function exactJson(value: unknown, indent?: number): string {
  return stringifyLossless(value, undefined, indent) ?? 'null';
}

/** fetch hides the socket error (ECONNREFUSED, ENOTFOUND, ...) in `cause`. */
export function networkReason(error: unknown): string {
  const cause = error instanceof Error ? error.cause : undefined;
  if (cause instanceof Error) return 'code' in cause && typeof cause.code === 'string' ? cause.code : cause.message;
  return error instanceof Error ? error.message : String(error);
}
