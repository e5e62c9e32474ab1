import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import http, { type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import https from 'node:https';
import { finished } from 'node:stream/promises';
import type { S3Client } from '@aws-sdk/client-s3';
import { SignatureV4 } from '@smithy/signature-v4';
import { requestDeadlineMs } from './client.ts';
import { kindOfAnswer, StoreError } from './errors.ts';

/** The signer and where it signs for, made once per client. */
interface Setup {
  signer: SignatureV4;
  origin: URL;
  signPayload: boolean;
}

/** Where a signed request goes: one object of a bucket, or (key undefined) the bucket itself. */
interface ObjectRequest {
  bucket: string;
  key: string | undefined;
  query?: Record<string, string>;
  abortSignal?: AbortSignal;
}

export interface SignedPutRequest extends ObjectRequest {
  /** The bytes, or their parts in order (sent one after the other, never copied into one buffer). */
  body: Uint8Array | readonly Uint8Array[];
  contentType: string;
  metadata: Record<string, string>;
  ifAbsent: boolean;
}

export interface SignedGetRequest extends ObjectRequest {
  key: string;
  /** Only these bytes of the object (`Range: bytes=start-end`, end inclusive): the answer is 206. */
  range?: { start: number; end: number };
}

/** ListObjectsV2 of a bucket: its query parameters (`list-type=2` is added). */
export interface SignedListRequest {
  bucket: string;
  query: Record<string, string>;
  abortSignal?: AbortSignal;
}

/** A refusal: the store's status and the error code its answer named. */
export interface Refused {
  ok: false;
  status: number;
  code: string | undefined;
}

/** What a PUT answered: 2xx with its ETag, or a refusal with the store's status and error code. */
export type SignedPutAnswer = { ok: true; etag: string | undefined } | Refused;

/**
 * What a GET answered: 2xx with the answer's headers and its body as a stream (the caller
 * reads it to the end or destroys it), or a refusal.
 */
export type SignedGetAnswer = { ok: true; headers: IncomingHttpHeaders; body: IncomingMessage } | Refused;

/** What a listing answered: 2xx with its XML, or a refusal. */
export type SignedListAnswer = { ok: true; xml: string } | Refused;

/** User metadata travels as headers with this prefix (names in lowercase). */
export const META_PREFIX = 'x-amz-meta-';


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

/** RFC 3986 encoding, as SigV4 signs paths and query strings (encodeURIComponent leaves !'()* alone). */
const encodeRfc3986 = (text: string) => encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** Each key segment encoded, as SigV4 signs S3 paths. */
function encodeKey(key: string): string {
  return key.split('/').map(encodeRfc3986).join('/');
}

/**
 * PutObject, GetObject and ListObjectsV2 as one signed HTTP request each, for the hot paths
 * (the send route's PUT, the roller's listing and read of every batch). The SDK's command pipeline (serialisation,
 * endpoint rules, retries, checksums, response parsing) costs more CPU than the rest of an
 * 8 KB send put together, and twice what a bare GET of a batch costs; this does only what
 * the request needs: SigV4 over the same endpoint, region and credentials as the client's
 * (path-style), a PUT's payload SHA-256 signed where the link needs it (signsPayload),
 * kept-alive sockets. One retry when a kept-alive socket turns out closed.
 */
export class SignedHttp {
  private readonly httpAgent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  private readonly httpsAgent = new https.Agent({ keepAlive: true, maxSockets: 64 });
  private signer: Promise<Setup> | undefined;
  /** Deadline of one request, connect and body included: the client's requestTimeoutMs (30 s by default, a 16 MiB body on a slow link fits). */
  private readonly deadlineMs: number;

  /** `signPayload` overrides signsPayload(endpoint): true hashes every PUT's payload into its signature. */
  constructor(
    private readonly client: S3Client,
    private readonly options: { signPayload?: boolean } = {},
  ) {
    this.deadlineMs = requestDeadlineMs(client);
  }

  async put(request: SignedPutRequest): Promise<SignedPutAnswer> {
    const setup = await this.setup();
    const parts = bodyParts(request.body);
    let payloadHash = UNSIGNED_PAYLOAD;
    if (setup.signPayload) {
      const hash = createHash('sha256');
      for (const part of parts) hash.update(part);
      payloadHash = hash.digest('hex');
    }
    const headers: Record<string, string> = {
      'content-type': request.contentType,
      'content-length': String(parts.reduce((sum, part) => sum + part.byteLength, 0)),
      'x-amz-content-sha256': payloadHash,
    };
    for (const [name, value] of Object.entries(request.metadata)) headers[`${META_PREFIX}${name.toLowerCase()}`] = value;
    if (request.ifAbsent) headers['if-none-match'] = '*';
    const res = await this.send(setup, 'PUT', request, headers, parts);
    if (!succeeded(res)) return refusal(res);
    await finished(res.resume());
    return { ok: true, etag: res.headers.etag?.replace(/^"|"$/g, '') };
  }

  async get(request: SignedGetRequest): Promise<SignedGetAnswer> {
    const headers: Record<string, string> = { 'x-amz-content-sha256': UNSIGNED_PAYLOAD };
    if (request.range) headers.range = `bytes=${request.range.start}-${request.range.end}`;
    const res = await this.send(await this.setup(), 'GET', request, headers);
    return succeeded(res) ? { ok: true, headers: res.headers, body: res } : refusal(res);
  }

  /** One ListObjectsV2 page, its XML read whole (a page of 1,000 keys is ~300 KB at most). */
  async list(request: SignedListRequest): Promise<SignedListAnswer> {
    const query = { 'list-type': '2', ...request.query };
    const res = await this.send(await this.setup(), 'GET', { ...request, key: undefined, query }, { 'x-amz-content-sha256': UNSIGNED_PAYLOAD });
    if (!succeeded(res)) return refusal(res);
    const chunks: Buffer[] = [];
    for await (const chunk of res) chunks.push(chunk as Buffer);
    return { ok: true, xml: Buffer.concat(chunks).toString('utf8') };
  }

  private setup(): Promise<Setup> {
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

  /** Sends the request, once more if a kept-alive socket was already closed; resolves with the answer's head. */
  private async send(setup: Setup, method: 'GET' | 'PUT', request: ObjectRequest, headers: Record<string, string>, body?: readonly Uint8Array[]): Promise<IncomingMessage> {
    try {
      return await this.once(setup, method, request, headers, body);
    } catch (error) {
      if (!(error instanceof StaleSocket)) throw error;
      return this.once(setup, method, request, headers, body);
    }
  }

  private async once({ signer, origin }: Setup, method: 'GET' | 'PUT', request: ObjectRequest, headers: Record<string, string>, body?: readonly Uint8Array[]): Promise<IncomingMessage> {
    const path = `${origin.pathname.replace(/\/+$/, '')}/${request.bucket}${request.key === undefined ? '' : `/${encodeKey(request.key)}`}`;
    const query = request.query ?? {};
    const signed = await signer.sign({
      method,
      protocol: origin.protocol,
      hostname: origin.hostname,
      ...(origin.port ? { port: Number(origin.port) } : {}),
      path,
      query,
      headers: { host: origin.host, ...headers },
    });
    const search = Object.entries(query)
      .map(([name, value]) => `${encodeRfc3986(name)}=${encodeRfc3986(value)}`)
      .join('&');
    const secure = origin.protocol === 'https:';
    return new Promise((resolve, reject) => {
      const req = (secure ? https : http).request(
        {
          method,
          protocol: origin.protocol,
          hostname: origin.hostname,
          port: origin.port || (secure ? 443 : 80),
          path: search === '' ? path : `${path}?${search}`,
          headers: signed.headers,
          agent: secure ? this.httpsAgent : this.httpAgent,
          ...(request.abortSignal ? { signal: request.abortSignal } : {}),
        },
        resolve,
      );
      // A plain timer, not AbortSignal.timeout: that builds a signal and a DOMException per
      // request. It runs until the answer's body is read, so a body nobody reads frees its socket.
      const deadline = setTimeout(
        () => req.destroy(Object.assign(new Error(`the ${method} did not finish within ${this.deadlineMs / 1000} s`), { code: 'ETIMEDOUT' })),
        this.deadlineMs,
      );
      req.once('close', () => clearTimeout(deadline));
      req.on('error', (error: NodeJS.ErrnoException) => {
        const stale = req.reusedSocket && (error.code === 'ECONNRESET' || error.code === 'EPIPE');
        reject(stale ? new StaleSocket(error.message, { cause: error }) : error);
      });
      for (const part of body ?? []) req.write(part);
      req.end();
    });
  }
}

function bodyParts(body: Uint8Array | readonly Uint8Array[]): readonly Uint8Array[] {
  return body instanceof Uint8Array ? [body] : body;
}

function succeeded(res: IncomingMessage): boolean {
  const status = res.statusCode ?? 0;
  return status >= 200 && status < 300;
}

/** A non-2xx answer as a refusal, its body read for the error code. */
async function refusal(res: IncomingMessage): Promise<Refused> {
  const status = res.statusCode ?? 0;
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  // The error document names its code: <Error><Code>AccessDenied</Code>... (a HEAD-like answer may have none).
  const code = /<Code>([^<]+)<\/Code>/.exec(Buffer.concat(chunks).toString('utf8'))?.[1];
  return { ok: false, status, code };
}

/** A refused request as a StoreError of its kind. */
export function refusalError(what: string, answer: { status: number; code: string | undefined }): StoreError {
  return new StoreError(kindOfAnswer(answer.status, answer.code), `${what}: ${answer.code ?? 'refused'} (HTTP ${answer.status})`, {
    status: answer.status,
    ...(answer.code ? { code: answer.code } : {}),
  });
}

const perClient = new WeakMap<S3Client, SignedHttp>();

/** The SignedHttp of `client`, shared by every store over it (one socket pool per client). */
export function signedHttpFor(client: S3Client): SignedHttp {
  let signed = perClient.get(client);
  if (!signed) {
    signed = new SignedHttp(client);
    perClient.set(client, signed);
  }
  return signed;
}
