import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { IcebergError, type IcebergErrorKind } from '../errors.ts';
import { parseObjectLocation, type ListedFile, type ListingFileIO } from './file-io.ts';

export interface S3Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface S3FileIOOptions {
  /** e.g. `http://127.0.0.1:8333`; omit for AWS. */
  endpoint?: string;
  region: string;
  /** Omit to use the AWS SDK's default provider chain. */
  credentials?: S3Credentials;
  /** Path-style addressing (`endpoint/bucket/key`), needed by most non-AWS stores. Default true. */
  pathStyle?: boolean;
  /** Per-request timeout; default 60 s. */
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 60_000;

/** FileIO over S3. Each put is a single PutObject, never multipart. */
export class S3FileIO implements ListingFileIO {
  private readonly client: S3Client;

  constructor(options: S3FileIOOptions) {
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.client = new S3Client({
      region: options.region,
      ...(options.endpoint ? { endpoint: options.endpoint } : {}),
      // A copy: the SDK annotates the credentials object it is given, and a frozen config refuses that.
      ...(options.credentials ? { credentials: { ...options.credentials } } : {}),
      forcePathStyle: options.pathStyle ?? true,
      // Stores other than AWS may not know the SDK's newer default checksums.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      requestHandler: { requestTimeout: timeoutMs, connectionTimeout: Math.min(timeoutMs, 10_000) },
    });
  }

  async put(location: string, bytes: Uint8Array, options: { contentType?: string } = {}): Promise<void> {
    const { bucket, key } = parseObjectLocation(location);
    await this.call(`put ${location}`, () =>
      this.client.send(
        new PutObjectCommand({
          Bucket: bucket,
          Key: key,
          Body: bytes,
          ContentLength: bytes.byteLength,
          ...(options.contentType ? { ContentType: options.contentType } : {}),
        }),
      ),
    );
  }

  async get(location: string): Promise<Uint8Array> {
    const { bucket, key } = parseObjectLocation(location);
    return this.call(`get ${location}`, async () => {
      const response = await this.client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      if (!response.Body) throw new IcebergError('server_error', `get ${location}: empty response body`);
      return response.Body.transformToByteArray();
    });
  }

  async delete(location: string): Promise<void> {
    const { bucket, key } = parseObjectLocation(location);
    await this.call(`delete ${location}`, () => this.client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key })));
  }

  async exists(location: string): Promise<boolean> {
    const { bucket, key } = parseObjectLocation(location);
    try {
      await this.call(`head ${location}`, () => this.client.send(new HeadObjectCommand({ Bucket: bucket, Key: key })));
      return true;
    } catch (error) {
      if (error instanceof IcebergError && error.kind === 'not_found') return false;
      throw error;
    }
  }

  /** Every object under `prefix` (`s3://bucket/key-prefix`), 1,000 a page; locations keep the prefix's scheme. */
  async *list(prefix: string): AsyncIterable<ListedFile> {
    const scheme = prefix.slice(0, prefix.indexOf('://') + 3);
    const slash = prefix.indexOf('/', scheme.length);
    // A bare bucket (`s3://bucket` or `s3://bucket/`) lists the whole bucket.
    const bucket = prefix.slice(scheme.length, slash < 0 ? undefined : slash);
    const key = slash < 0 ? '' : prefix.slice(slash + 1);
    let token: string | undefined;
    do {
      const page = await this.call(`list ${prefix}`, () =>
        this.client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: key, ...(token ? { ContinuationToken: token } : {}) })),
      );
      for (const object of page.Contents ?? []) {
        if (object.Key === undefined || object.LastModified === undefined) throw new IcebergError('server_error', `list ${prefix}: an object without a key or a modification time`);
        yield { location: `${scheme}${bucket}/${object.Key}`, lastModified: object.LastModified.getTime(), size: object.Size ?? 0 };
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
      if (page.IsTruncated && !token) throw new IcebergError('server_error', `list ${prefix}: a truncated page without a continuation token`);
    } while (token);
  }

  /** Releases the client's sockets. */
  close(): void {
    this.client.destroy();
  }

  private async call<T>(what: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      if (error instanceof IcebergError) throw error;
      throw storageError(what, error);
    }
  }
}

function storageError(what: string, cause: unknown): IcebergError {
  if (cause instanceof S3ServiceException) {
    const status = cause.$metadata.httpStatusCode;
    return new IcebergError(kindForS3(cause.name, status), `${what}: ${cause.name}${status ? ` (HTTP ${status})` : ''}`, {
      cause,
      ...(status ? { status } : {}),
      serverType: cause.name,
    });
  }
  // No answer from the store: refused, reset or timed out.
  return new IcebergError('unavailable', `${what}: no response from object store`, { cause });
}

function kindForS3(name: string, status: number | undefined): IcebergErrorKind {
  if (name === 'NoSuchKey' || name === 'NotFound' || name === 'NoSuchBucket' || status === 404) return 'not_found';
  if (status === 401) return 'unauthorized';
  if (status === 403) return 'forbidden';
  if (status === 400) return 'bad_request';
  if (status === 502 || status === 503 || status === 504) return 'unavailable';
  return 'server_error';
}
