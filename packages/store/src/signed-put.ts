import { createHash } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { Sha256 } from '@aws-crypto/sha256-js';
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
 * signed, kept-alive sockets. One retry when a kept-alive socket turns out closed.
 */
export class SignedPut {
  private readonly httpAgent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  private readonly httpsAgent = new https.Agent({ keepAlive: true, maxSockets: 64 });
  private signer: Promise<{ signer: SignatureV4; origin: URL }> | undefined;

  constructor(private readonly client: S3Client) {}

  async put(request: SignedPutRequest): Promise<SignedPutAnswer> {
    try {
      return await this.once(request);
    } catch (error) {
      if (!(error instanceof StaleSocket)) throw error;
      return this.once(request);
    }
  }

  private setup(): Promise<{ signer: SignatureV4; origin: URL }> {
    this.signer ??= (async () => {
      const config = this.client.config;
      const region = await config.region();
      const endpoint = config.endpoint ? await config.endpoint() : undefined;
      const origin = endpoint
        ? new URL(`${endpoint.protocol}//${endpoint.hostname}${endpoint.port ? `:${endpoint.port}` : ''}${endpoint.path.replace(/\/+$/, '')}`)
        : new URL(`https://s3.${region}.amazonaws.com`);
      // The client's provider: static keys, or the default chain with its refresh.
      const signer = new SignatureV4({ credentials: config.credentials, region, service: 's3', sha256: Sha256, uriEscapePath: false });
      return { signer, origin };
    })();
    return this.signer;
  }

  private async once(request: SignedPutRequest): Promise<SignedPutAnswer> {
    const { signer, origin } = await this.setup();
    const path = `${origin.pathname.replace(/\/+$/, '')}/${request.bucket}/${encodeKey(request.key)}`;
    const headers: Record<string, string> = {
      host: origin.host,
      'content-type': request.contentType,
      'content-length': String(request.body.byteLength),
      'x-amz-content-sha256': createHash('sha256').update(request.body).digest('hex'),
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
    const signal = request.abortSignal ? AbortSignal.any([request.abortSignal, AbortSignal.timeout(PUT_TIMEOUT_MS)]) : AbortSignal.timeout(PUT_TIMEOUT_MS);
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
          signal,
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
