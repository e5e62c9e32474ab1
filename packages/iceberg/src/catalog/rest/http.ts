import { IcebergError } from '../../errors.ts';
import { parseJson, stringifyJson } from '../../spec/json.ts';
import { trimSlashes, type AuthProvider } from './auth.ts';
import { errorFromResponse, errorFromTransport, type Operation } from './status.ts';

export interface RestRequest {
  method: 'GET' | 'POST' | 'HEAD' | 'DELETE';
  path: string;
  query?: Record<string, string | undefined>;
  body?: unknown;
  headers?: Record<string, string>;
  operation: Operation;
  /** Names the action in error messages, e.g. `load table garden.events`. */
  what: string;
}

export interface RestResponse {
  status: number;
  body: unknown;
}

export interface TransportOptions {
  uri: string;
  auth: AuthProvider;
  timeoutMs: number;
  headers: Record<string, string>;
  fetch: typeof fetch;
}

/** JSON over HTTP to the catalog: auth, timeout, lossless bodies, errors by kind. */
export class RestTransport {
  private readonly base: string;

  constructor(private readonly options: TransportOptions) {
    this.base = trimSlashes(options.uri);
  }

  async send(request: RestRequest): Promise<RestResponse> {
    const response = await this.attempt(request);
    // An expired or revoked token gets one fresh try.
    if (response.status === 401 && this.options.auth.invalidate()) {
      return this.finish(request, await this.attempt(request));
    }
    return this.finish(request, response);
  }

  private async attempt(request: RestRequest): Promise<Response> {
    const url = new URL(`${this.base}${request.path}`);
    for (const [key, value] of Object.entries(request.query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, value);
    }
    const body = request.body === undefined ? undefined : stringifyJson(request.body);
    const headers = await this.options.auth.authorize({
      method: request.method,
      url,
      headers: {
        accept: 'application/json',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...this.options.headers,
        ...request.headers,
      },
      body,
    });
    try {
      return await this.options.fetch(url, {
        method: request.method,
        headers,
        ...(body === undefined ? {} : { body }),
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
    } catch (cause) {
      throw errorFromTransport(cause, request.operation, request.what);
    }
  }

  private async finish(request: RestRequest, response: Response): Promise<RestResponse> {
    let text: string;
    try {
      text = await response.text();
    } catch (cause) {
      throw errorFromTransport(cause, request.operation, request.what);
    }
    if (!response.ok) {
      throw errorFromResponse(response.status, parseLenient(text), request.operation, request.what);
    }
    if (text.length === 0) return { status: response.status, body: undefined };
    try {
      return { status: response.status, body: parseJson(text) };
    } catch (cause) {
      throw new IcebergError('server_error', `${request.what}: response is not JSON`, { status: response.status, cause });
    }
  }
}

/** Error bodies are best effort: a proxy may answer HTML. */
function parseLenient(text: string): unknown {
  try {
    return parseJson(text);
  } catch {
    return undefined;
  }
}
