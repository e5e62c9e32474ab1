import { S3Client } from '@aws-sdk/client-s3';

export interface S3ClientOptions {
  /** e.g. `http://127.0.0.1:8333`; omit for AWS itself. */
  endpoint?: string;
  region: string;
  /** Omit for the AWS SDK's default credential chain. */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** Connect deadline; default 5 s. */
  connectTimeoutMs?: number;
  /**
   * Deadline of one attempt once connected; default 30 s (a 16 MiB PUT on a slow link). The
   * SDK's commands take it as the socket's idle time; the signed GET, PUT and listing
   * (signed-http.ts) as the deadline of the whole request, body included.
   */
  requestTimeoutMs?: number;
  /** Attempts per call, the first included; default 2, so a dead store answers in seconds. */
  maxAttempts?: number;
  /** Sockets kept per host; default 64, above the send route's expected concurrency. */
  maxSockets?: number;
}

/**
 * An S3 client for the platform's store: path-style addressing (SeaweedFS, MinIO and most
 * non-AWS stores need it), checksums only where the API requires them (the newer CRC
 * defaults cost a pass over every body and some stores refuse the trailer form), bounded
 * timeouts and retries.
 */
export function createS3Client(options: S3ClientOptions): S3Client {
  const client = new S3Client({
    region: options.region,
    ...(options.endpoint ? { endpoint: options.endpoint } : {}),
    // A copy: the SDK annotates the credentials object it is given, and a frozen config refuses that.
    ...(options.credentials ? { credentials: { ...options.credentials } } : {}),
    forcePathStyle: true,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: options.maxAttempts ?? 2,
    requestHandler: {
      connectionTimeout: options.connectTimeoutMs ?? 5_000,
      requestTimeout: options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
      // Without it the SDK only logs a warning when the deadline passes, and the call waits on.
      throwOnRequestTimeout: true,
      httpAgent: { keepAlive: true, maxSockets: options.maxSockets ?? 64 },
    },
  });
  if (options.requestTimeoutMs !== undefined) deadlines.set(client, options.requestTimeoutMs);
  return client;
}

const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
/** The requestTimeoutMs each client was made with, for the requests signed-http.ts sends over it. */
const deadlines = new WeakMap<S3Client, number>();

/** Deadline of one signed request over `client`: its requestTimeoutMs, else 30 s. */
export function requestDeadlineMs(client: S3Client): number {
  return deadlines.get(client) ?? DEFAULT_REQUEST_TIMEOUT_MS;
}
