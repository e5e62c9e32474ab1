import { createHash } from 'node:crypto';
import { Sha256 } from '@aws-crypto/sha256-js';
import { SignatureV4 } from '@smithy/signature-v4';
import { IcebergError } from '../../errors.ts';
import { Endpoints } from './endpoints.ts';
import { errorFromResponse, errorFromTransport } from './status.ts';

/** How the client authenticates to the catalog. */
export type CatalogAuth =
  /** OAuth2 client credentials against the catalog's token endpoint (default `{uri}/v1/oauth/tokens`). */
  | { type: 'oauth2'; clientId: string; clientSecret: string; scope?: string; tokenUri?: string }
  /** AWS Signature V4 on every request (`s3` for SeaweedFS, `s3tables`/`glue` for AWS). */
  | { type: 'sigv4'; accessKeyId: string; secretAccessKey: string; sessionToken?: string; region: string; service?: string }
  | { type: 'bearer'; token: string }
  | { type: 'none' };

export interface SignableRequest {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body: string | undefined;
}

/** Adds credentials to a request. */
export interface AuthProvider {
  authorize(request: SignableRequest): Promise<Record<string, string>>;
  /** Drops cached credentials after a 401; true when fresh ones may succeed. */
  invalidate(): boolean;
}

export interface AuthContext {
  uri: string;
  timeoutMs: number;
  fetch: typeof fetch;
}

export function createAuthProvider(auth: CatalogAuth, context: AuthContext): AuthProvider {
  switch (auth.type) {
    case 'oauth2':
      return new OAuth2ClientCredentials(auth, context);
    case 'sigv4':
      return new SigV4Signer(auth);
    case 'bearer':
      return staticHeaders({ authorization: `Bearer ${auth.token}` });
    case 'none':
      return staticHeaders({});
  }
}

function staticHeaders(headers: Record<string, string>): AuthProvider {
  return {
    authorize: async (request) => ({ ...request.headers, ...headers }),
    invalidate: () => false,
  };
}

interface CachedToken {
  value: string;
  /** Epoch ms after which the token is fetched again, ahead of its real expiry. */
  refreshAt: number;
}

/** Tokens without `expires_in` are still refreshed now and then. */
const DEFAULT_TOKEN_LIFETIME_MS = 3_600_000;
const MAX_REFRESH_MARGIN_MS = 60_000;

class OAuth2ClientCredentials implements AuthProvider {
  private token: CachedToken | undefined;
  private pending: Promise<CachedToken> | undefined;
  private readonly tokenUrl: string;

  constructor(
    private readonly auth: Extract<CatalogAuth, { type: 'oauth2' }>,
    private readonly context: AuthContext,
  ) {
    this.tokenUrl = auth.tokenUri ?? `${trimSlashes(context.uri)}${Endpoints.oauthTokens()}`;
  }

  async authorize(request: SignableRequest): Promise<Record<string, string>> {
    const token = await this.currentToken();
    return { ...request.headers, authorization: `Bearer ${token.value}` };
  }

  invalidate(): boolean {
    this.token = undefined;
    return true;
  }

  private async currentToken(): Promise<CachedToken> {
    if (this.token && Date.now() < this.token.refreshAt) return this.token;
    // Concurrent callers share one token request.
    this.pending ??= this.fetchToken().finally(() => {
      this.pending = undefined;
    });
    this.token = await this.pending;
    return this.token;
  }

  private async fetchToken(): Promise<CachedToken> {
    const form = new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: this.auth.clientId,
      client_secret: this.auth.clientSecret,
      scope: this.auth.scope ?? 'catalog',
    });
    const what = 'fetch OAuth2 token';
    let response: Response;
    try {
      response = await this.context.fetch(this.tokenUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: form.toString(),
        signal: AbortSignal.timeout(this.context.timeoutMs),
      });
    } catch (cause) {
      throw errorFromTransport(cause, 'other', what);
    }
    const text = await response.text();
    const body = safeJson(text);
    if (!response.ok) {
      // The token endpoint answers 400/401 with OAuth error codes for bad client credentials.
      if (response.status === 400 || response.status === 401) {
        throw new IcebergError('unauthorized', `${what}: HTTP ${response.status} ${oauthErrorText(body)}`.trim(), { status: response.status });
      }
      throw errorFromResponse(response.status, body, 'other', what);
    }
    const accessToken = (body as { access_token?: unknown } | undefined)?.access_token;
    if (typeof accessToken !== 'string' || accessToken.length === 0) {
      throw new IcebergError('server_error', `${what}: response has no access_token`, { status: response.status });
    }
    const expiresIn = (body as { expires_in?: unknown }).expires_in;
    const lifetimeMs = typeof expiresIn === 'number' && expiresIn > 0 ? expiresIn * 1000 : DEFAULT_TOKEN_LIFETIME_MS;
    const margin = Math.min(MAX_REFRESH_MARGIN_MS, lifetimeMs / 10);
    return { value: accessToken, refreshAt: Date.now() + lifetimeMs - margin };
  }
}

export function trimSlashes(uri: string): string {
  return uri.replace(/\/+$/, '');
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function oauthErrorText(body: unknown): string {
  if (!body || typeof body !== 'object') return '';
  const { error, error_description: description } = body as { error?: unknown; error_description?: unknown };
  return [error, description].filter((part) => typeof part === 'string').join(': ');
}

function sha256Hex(body: string | undefined): string {
  return createHash('sha256').update(body ?? '').digest('hex');
}

class SigV4Signer implements AuthProvider {
  private readonly signer: SignatureV4;

  constructor(auth: Extract<CatalogAuth, { type: 'sigv4' }>) {
    const service = auth.service ?? 's3';
    this.signer = new SignatureV4({
      credentials: {
        accessKeyId: auth.accessKeyId,
        secretAccessKey: auth.secretAccessKey,
        ...(auth.sessionToken ? { sessionToken: auth.sessionToken } : {}),
      },
      region: auth.region,
      service,
      sha256: Sha256,
      // S3 signs the path as sent; other AWS services encode it once more.
      uriEscapePath: service !== 's3',
    });
  }

  async authorize(request: SignableRequest): Promise<Record<string, string>> {
    const { url } = request;
    const query: Record<string, string> = {};
    for (const [key, value] of url.searchParams) query[key] = value;
    const signed = await this.signer.sign({
      method: request.method,
      protocol: url.protocol,
      hostname: url.hostname,
      ...(url.port ? { port: Number(url.port) } : {}),
      path: url.pathname,
      query,
      headers: { ...request.headers, host: url.host, 'x-amz-content-sha256': sha256Hex(request.body) },
      ...(request.body === undefined ? {} : { body: request.body }),
    });
    return signed.headers;
  }

  invalidate(): boolean {
    return false;
  }
}
