import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import {
  DeleteObjectsCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { StoreError, isStoreError, toStoreError } from './errors.ts';
import { parseListAnswer } from './list-answer.ts';
import { META_PREFIX, refusalError, type SignedGetAnswer, signedHttpFor, type SignedListAnswer, type SignedPutAnswer } from './signed-http.ts';

/** DeleteObjects takes at most this many keys per call (S3's limit, SeaweedFS's too). */
export const DELETE_BATCH_LIMIT = 1000;
/** DeleteObjects calls in flight at once: a roll of tens of thousands of batches deletes them side by side. */
const DELETES_IN_FLIGHT = 4;

export interface PutOptions {
  contentType: string;
  /** User metadata, sent as `x-amz-meta-<name>`; names in lowercase. */
  metadata?: Record<string, string>;
  /** Refuse to replace an existing object (`If-None-Match: *`): precondition_failed then. */
  ifAbsent?: boolean;
  abortSignal?: AbortSignal;
}

export interface ObjectHead {
  key: string;
  size: number;
  contentType: string | undefined;
  /** User metadata, names in lowercase. */
  metadata: Record<string, string>;
  /** The entity tag without quotes: the MD5 of the bytes for a single PUT. */
  etag: string | undefined;
  lastModified: Date | undefined;
}

export interface ObjectSummary {
  key: string;
  size: number;
  etag: string | undefined;
  lastModified: Date | undefined;
}

export interface ListPage {
  objects: ObjectSummary[];
  /** Common prefixes below `prefix` when listing with a delimiter. */
  prefixes: string[];
  /** Pass back as `continuationToken` for the next page; undefined on the last one. */
  nextToken: string | undefined;
}

export interface ListOptions {
  /** Group keys by this character after the prefix (e.g. `/` for one folder level). */
  delimiter?: string;
  /** Keys per page, at most 1000 (the store may answer fewer). */
  pageSize?: number;
  continuationToken?: string;
  /** List only keys after this one. */
  startAfter?: string;
}

export interface DeleteFailure {
  key: string;
  kind: StoreError['kind'];
  code: string | undefined;
  message: string;
}

export interface DeleteResult {
  /** Keys the store confirmed deleted (a key that did not exist counts as deleted). */
  deleted: string[];
  /** Keys the store refused, each with its reason; the others went through. */
  failed: DeleteFailure[];
}

const unquote = (etag: string | undefined) => etag?.replace(/^"|"$/g, '');

/** The MD5 of `bytes` in hex: what a single PUT's ETag is on S3 and SeaweedFS. */
export function md5Hex(bytes: Uint8Array): string {
  return createHash('md5').update(bytes).digest('hex');
}

/**
 * One bucket of an S3-compatible store. Every failure is a StoreError with a kind from a
 * closed set. Objects go up in one PUT each, never multipart, and come back in one GET;
 * those and listings are signed and sent directly (signed-http.ts); the other calls go
 * through the SDK client.
 */
export class ObjectStore {
  constructor(
    private readonly client: S3Client,
    readonly bucket: string,
  ) {}

  /** `s3://<bucket>/<key>` */
  uri(key = ''): string {
    return `s3://${this.bucket}/${key}`;
  }

  /**
   * Writes `body` as one object in one PUT, with its content type and metadata. With
   * `ifAbsent`, an existing object is never replaced (precondition_failed). A write the
   * store refuses while the bucket can still be read is quota_exceeded: that is how a
   * read-only (over quota) bucket answers. `body` may be given in parts, sent without a copy.
   */
  async put(key: string, body: Uint8Array | readonly Uint8Array[], options: PutOptions): Promise<{ etag: string | undefined }> {
    const what = `put ${this.uri(key)}`;
    let answer: SignedPutAnswer;
    try {
      answer = await signedHttpFor(this.client).put({
        bucket: this.bucket,
        key,
        body,
        contentType: options.contentType,
        metadata: options.metadata ?? {},
        ifAbsent: options.ifAbsent ?? false,
        ...(options.abortSignal ? { abortSignal: options.abortSignal } : {}),
      });
    } catch (error) {
      throw toStoreError(what, error);
    }
    if (answer.ok) return { etag: answer.etag };
    const failure = refusalError(what, answer);
    if (failure.kind === 'denied' && failure.code === 'AccessDenied' && (await this.readable())) {
      throw new StoreError('quota_exceeded', `${failure.message}: the bucket is readable but refuses writes (read-only or over quota)`, {
        status: answer.status,
        code: 'AccessDenied',
      });
    }
    throw failure;
  }

  async head(key: string): Promise<ObjectHead> {
    const answer = await this.call(`head ${this.uri(key)}`, () => this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key })));
    return {
      key,
      size: answer.ContentLength ?? 0,
      contentType: answer.ContentType,
      metadata: answer.Metadata ?? {},
      etag: unquote(answer.ETag),
      lastModified: answer.LastModified,
    };
  }

  /**
   * The object's bytes as a stream, with its head; with `range`, only those bytes (start and
   * end inclusive), and `head.size` is then the range's. The caller must consume or destroy the stream.
   */
  async get(key: string, options: { abortSignal?: AbortSignal; range?: { start: number; end: number } } = {}): Promise<{ head: ObjectHead; body: Readable }> {
    const what = `get ${this.uri(key)}`;
    let answer: SignedGetAnswer;
    try {
      answer = await signedHttpFor(this.client).get({
        bucket: this.bucket,
        key,
        ...(options.abortSignal ? { abortSignal: options.abortSignal } : {}),
        ...(options.range ? { range: options.range } : {}),
      });
    } catch (error) {
      throw toStoreError(what, error);
    }
    if (!answer.ok) throw refusalError(what, answer);
    const { headers } = answer;
    const metadata: Record<string, string> = {};
    for (const [name, value] of Object.entries(headers)) {
      if (name.startsWith(META_PREFIX) && typeof value === 'string') metadata[name.slice(META_PREFIX.length)] = value;
    }
    const lastModified = headers['last-modified'];
    return {
      head: {
        key,
        size: Number(headers['content-length'] ?? 0),
        contentType: headers['content-type'],
        metadata,
        etag: unquote(headers.etag),
        lastModified: lastModified === undefined ? undefined : new Date(lastModified),
      },
      body: answer.body,
    };
  }

  /**
   * The whole object (or `range` of it) in memory, with its head. A body cut off on the way (a
   * reset, a link down mid-read) is a StoreError `unavailable` like a request with no answer.
   */
  async getBytes(key: string, options: { abortSignal?: AbortSignal; range?: { start: number; end: number } } = {}): Promise<{ head: ObjectHead; bytes: Buffer }> {
    const { head, body } = await this.get(key, options);
    const chunks: Buffer[] = [];
    try {
      for await (const chunk of body) chunks.push(chunk as Buffer);
    } catch (error) {
      throw toStoreError(`get ${this.uri(key)} (body)`, error);
    }
    return { head, bytes: Buffer.concat(chunks) };
  }

  /** One page of the keys under `prefix`, in key order. */
  async listPage(prefix: string, options: ListOptions = {}): Promise<ListPage> {
    const what = `list ${this.uri(prefix)}`;
    const query: Record<string, string> = { prefix, 'max-keys': String(Math.min(options.pageSize ?? 1000, 1000)) };
    if (options.delimiter) query.delimiter = options.delimiter;
    if (options.continuationToken) query['continuation-token'] = options.continuationToken;
    if (options.startAfter) query['start-after'] = options.startAfter;
    let answer: SignedListAnswer;
    try {
      answer = await signedHttpFor(this.client).list({ bucket: this.bucket, query });
    } catch (error) {
      throw toStoreError(what, error);
    }
    if (!answer.ok) throw refusalError(what, answer);
    return parseListAnswer(answer.xml);
  }

  /** Every page under `prefix`, one after the other. */
  async *list(prefix: string, options: Omit<ListOptions, 'continuationToken'> = {}): AsyncGenerator<ListPage> {
    let continuationToken: string | undefined;
    do {
      const page = await this.listPage(prefix, { ...options, ...(continuationToken ? { continuationToken } : {}) });
      yield page;
      continuationToken = page.nextToken;
    } while (continuationToken);
  }

  /**
   * Deletes `keys`, at most 1000 per DeleteObjects call, a few calls in flight. Keys the store
   * refuses are reported one by one; a call that fails as a whole throws (the keys of other
   * calls may be gone).
   */
  async deleteMany(keys: readonly string[]): Promise<DeleteResult> {
    const result: DeleteResult = { deleted: [], failed: [] };
    const chunks: string[][] = [];
    for (let start = 0; start < keys.length; start += DELETE_BATCH_LIMIT) chunks.push(keys.slice(start, start + DELETE_BATCH_LIMIT));
    let next = 0;
    const worker = async () => {
      while (next < chunks.length) {
        const chunk = chunks[next++]!;
        const answer = await this.call(`delete ${chunk.length} objects in ${this.uri()}`, () =>
          this.client.send(new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: chunk.map((Key) => ({ Key })), Quiet: true } })),
        );
        const failed = new Set<string>();
        for (const error of answer.Errors ?? []) {
          // Deleting what is already gone is a success, as S3 itself treats it.
          if (error.Code === 'NoSuchKey' || error.Key === undefined) continue;
          failed.add(error.Key);
          result.failed.push({ key: error.Key, kind: kindOfDeleteError(error.Code), code: error.Code, message: error.Message ?? 'refused' });
        }
        for (const key of chunk) if (!failed.has(key)) result.deleted.push(key);
      }
    };
    await Promise.all(Array.from({ length: Math.min(DELETES_IN_FLIGHT, chunks.length) }, worker));
    return result;
  }

  /** Resolves when the bucket exists and we may use it; throws a StoreError otherwise. */
  async headBucket(): Promise<void> {
    await this.call(`head bucket ${this.uri()}`, () => this.client.send(new HeadBucketCommand({ Bucket: this.bucket })));
  }

  /** Whether the bucket answers a read: tells a refused write on a readable bucket from bad credentials. */
  private async readable(): Promise<boolean> {
    try {
      await this.headBucket();
      return true;
    } catch (error) {
      if (isStoreError(error)) return false;
      throw error;
    }
  }

  private async call<T>(operation: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw toStoreError(operation, error);
    }
  }
}

/** A per-key DeleteObjects error code to a kind (no HTTP status comes with it). */
function kindOfDeleteError(code: string | undefined): StoreError['kind'] {
  if (code === 'AccessDenied') return 'denied';
  if (code === 'InternalError' || code === 'ServiceUnavailable' || code === 'SlowDown') return 'unavailable';
  return 'bad_request';
}
