import { S3Client } from '@aws-sdk/client-s3';

export interface S3ClientOptions {
  /** e.g. `http://127.0.0.1:8333`; omit for AWS itself. */
  endpoint?: string;
  region: string;
  /** Omit for the AWS SDK's default credential chain. */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** Connect deadline; default 5 s. */
  connectTimeoutMs?: number;
  /** Deadline of one attempt once connected; default 30 s (a 16 MiB PUT on a slow link). */
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
  return new S3Client({
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
      requestTimeout: options.requestTimeoutMs ?? 30_000,
      httpAgent: { keepAlive: true, maxSockets: options.maxSockets ?? 64 },
    },
  });
}
