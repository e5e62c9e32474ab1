import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { S3Client } from '@aws-sdk/client-s3';
import { SignatureV4 } from '@smithy/signature-v4';
import { kindOfAnswer, StoreError } from './errors.ts';

export interface SignedPutRequest {
  bucket: string;
  key: string;
  body: Uint8Array;
  contentType: string;
  metadata: Record<string, string>;
  ifAbsent: boolean;
  abortSignal?: AbortSignal;
}

/** What a PUT answered: 2xx with its ETag, or a refusal with the store's status and error code. */
export type SignedPutAnswer = { ok: true; etag: string | undefined } | { ok: false; status: number; code: string | undefined };

/** Deadline of one PUT, connect included; a 16 MiB body on a slow link fits. */
const PUT_TIMEOUT_MS = 30_000;

/**
 * SHA-256 and HMAC-SHA-256 for the signer from node:crypto (OpenSSL). The pure-JavaScript
 * implementation the SDK ships costs more CPU than the rest of signing a PUT.
 */
class NodeSha256 {
  private readonly hash: Hash | Hmac;

  constructor(secret?: SourceData) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', asBytes(secret));
  }

  update(data: SourceData): void {
    this.hash.update(asBytes(data));
  }

  digest(): Promise<Uint8Array> {
    return Promise.resolve(this.hash.digest());
  }

  reset(): void {
    throw new Error('NodeSha256 cannot be reset; make a new one');
  }
}

/** What the signer hands a hash: the SDK's SourceData. */
type SourceData = string | ArrayBuffer | ArrayBufferView;

function asBytes(data: SourceData): string | Uint8Array {
  if (typeof data === 'string') return data;
  return ArrayBuffer.isView(data) ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength) : new Uint8Array(data);
}

/** `x-amz-content-sha256` of a PUT whose payload is not part of the signature. */
const UNSIGNED_PAYLOAD = 'UNSIGNED-PAYLOAD';

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Whether a PUT's payload is hashed into its signature. Over TLS the connection already
 * authenticates every byte, and on the loopback interface no network lies between; there,
 * a second SHA-256 over a 16 MiB body costs more than the rest of the send route's work.
 * Over plain HTTP to another machine the signed hash is the only guard, so it is kept.
 */
export function signsPayload(origin: URL): boolean {
  return origin.protocol === 'http:' && !LOOPBACK_HOSTS.has(origin.hostname);
}

/** A kept-alive socket the store had already closed: the request never reached it. */
class StaleSocket extends Error {
  override readonly name = 'StaleSocket';
}

/** RFC 3986 encoding of each key segment, as SigV4 signs S3 paths (encodeURIComponent leaves !'()* alone). */
function encodeKey(key: string): string {
  return key
    .split('/')
    .map((segment) => encodeURIComponent(segment).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`))
    .join('/');
}

/**
 * PutObject as one signed HTTP request, for the send route's hot path. The SDK's command
 * pipeline (serialisation, endpoint rules, retries, checksums) costs more CPU than the rest
 * of an 8 KB send put together; this does only what a PUT needs: SigV4 over the same
 * endpoint, region and credentials as the client's (path-style), the payload's SHA-256
 * signed where the link needs it (signsPayload), kept-alive sockets. One retry when a
 * kept-alive socket turns out closed.
 */
export class SignedPut {
  private readonly httpAgent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  private readonly httpsAgent = new https.Agent({ keepAlive: true, maxSockets: 64 });
  private signer: Promise<{ signer: SignatureV4; origin: URL; signPayload: boolean }> | undefined;

  /** `signPayload` overrides signsPayload(endpoint): true hashes every payload into its signature. */
  constructor(
    private readonly client: S3Client,
    private readonly options: { signPayload?: boolean } = {},
  ) {}

  async put(request: SignedPutRequest): Promise<SignedPutAnswer> {
    try {
      return await this.once(request);
    } catch (error) {
      if (!(error instanceof StaleSocket)) throw error;
      return this.once(request);
    }
  }

  private setup(): Promise<{ signer: SignatureV4; origin: URL; signPayload: boolean }> {
    this.signer ??= (async () => {
      const config = this.client.config;
      const region = await config.region();
      const endpoint = config.endpoint ? await config.endpoint() : undefined;
      const origin = endpoint
        ? new URL(`${endpoint.protocol}//${endpoint.hostname}${endpoint.port ? `:${endpoint.port}` : ''}${endpoint.path.replace(/\/+$/, '')}`)
        : new URL(`https://s3.${region}.amazonaws.com`);
      // The client's provider: static keys, or the default chain with its refresh.
      const signer = new SignatureV4({ credentials: config.credentials, region, service: 's3', sha256: NodeSha256, uriEscapePath: false });
      return { signer, origin, signPayload: this.options.signPayload ?? signsPayload(origin) };
    })();
    return this.signer;
  }

  private async once(request: SignedPutRequest): Promise<SignedPutAnswer> {
    const { signer, origin, signPayload } = await this.setup();
    const path = `${origin.pathname.replace(/\/+$/, '')}/${request.bucket}/${encodeKey(request.key)}`;
    const headers: Record<string, string> = {
      host: origin.host,
      'content-type': request.contentType,
      'content-length': String(request.body.byteLength),
      'x-amz-content-sha256': signPayload ? createHash('sha256').update(request.body).digest('hex') : UNSIGNED_PAYLOAD,
    };
    for (const [name, value] of Object.entries(request.metadata)) headers[`x-amz-meta-${name.toLowerCase()}`] = value;
    if (request.ifAbsent) headers['if-none-match'] = '*';
    const signed = await signer.sign({
      method: 'PUT',
      protocol: origin.protocol,
      hostname: origin.hostname,
      ...(origin.port ? { port: Number(origin.port) } : {}),
      path,
      query: {},
      headers,
    });
    const secure = origin.protocol === 'https:';
    return new Promise((resolve, reject) => {
      const req = (secure ? https : http).request(
        {
          method: 'PUT',
          protocol: origin.protocol,
          hostname: origin.hostname,
          port: origin.port || (secure ? 443 : 80),
          path,
          headers: signed.headers,
          agent: secure ? this.httpsAgent : this.httpAgent,
          ...(request.abortSignal ? { signal: request.abortSignal } : {}),
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('error', reject);
          res.on('end', () => {
            const status = res.statusCode ?? 0;
            if (status >= 200 && status < 300) {
              const etag = res.headers.etag?.replace(/^"|"$/g, '');
              resolve({ ok: true, etag });
              return;
            }
            // The error document names its code: <Error><Code>AccessDenied</Code>...
            const code = /<Code>([^<]+)<\/Code>/.exec(Buffer.concat(chunks).toString('utf8'))?.[1];
            resolve({ ok: false, status, code });
          });
        },
      );
      // A plain timer, not AbortSignal.timeout: that builds a signal and a DOMException per PUT.
      const deadline = setTimeout(
        () => req.destroy(Object.assign(new Error(`the PUT did not finish within ${PUT_TIMEOUT_MS / 1000} s`), { code: 'ETIMEDOUT' })),
        PUT_TIMEOUT_MS,
      );
      req.once('close', () => clearTimeout(deadline));
      req.on('error', (error: NodeJS.ErrnoException) => {
        const stale = req.reusedSocket && (error.code === 'ECONNRESET' || error.code === 'EPIPE');
        reject(stale ? new StaleSocket(error.message, { cause: error }) : error);
      });
      req.end(request.body);
    });
  }
}

/** A refused PUT as a StoreError of its kind. */
export function putRefusal(what: string, answer: { status: number; code: string | undefined }): StoreError {
  return new StoreError(kindOfAnswer(answer.status, answer.code), `${what}: ${answer.code ?? 'refused'} (HTTP ${answer.status})`, {
    status: answer.status,
    ...(answer.code ? { code: answer.code } : {}),
  });
}

const perClient = new WeakMap<S3Client, SignedPut>();

/** The SignedPut of `client`, shared by every store over it (one socket pool per client). */
export function signedPutFor(client: S3Client): SignedPut {
  let put = perClient.get(client);
  if (!put) {
    put = new SignedPut(client);
    perClient.set(client, put);
  }
  return put;
}
