import { STALE_CLAIM_SECONDS } from './domain/intake/claim.ts';
import { INTAKE_CRASH_POINTS, type IntakeCrashPoint } from './domain/intake/segments.ts';
import { z } from 'zod';
import { DEFAULT_IN_FLIGHT_LIMITS, type InFlightLimits } from './domain/intake/in-flight.ts';
import { DEFAULT_STORE_TIMEOUT_MS } from './domain/intake/stores.ts';
import { CATALOG_TIMEOUT_MS } from './domain/catalogs.ts';
import { DEFAULT_SERVER_TIMEOUTS, type ServerTimeouts } from './http/server-limits.ts';
import { readInternalTls, type InternalTls } from './http/internal-tls.ts';

const Url = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' });
const Millis = (fallback: number) => z.coerce.number().int().min(1).max(3_600_000).default(fallback);
const Bytes = (fallback: number) => z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER).default(fallback);
/** A bearer token: printable, no spaces, long enough not to be guessed. */
const MetricsToken = z.string().regex(/^[\x21-\x7e]{16,}$/, { error: 'must be at least 16 printable characters without spaces' });
const Flag = z.enum(['true', 'false', '1', '0']).transform((value) => value === 'true' || value === '1');

/** A 32-byte key in base64: AES-256-GCM seals warehouse secrets with it. */
const SecretKey = z
  .string()
  .refine((value) => Buffer.from(value, 'base64').length === 32 && /^[A-Za-z0-9+/]+={0,2}$/.test(value), {
    error: 'must be 32 random bytes in base64 (e.g. `openssl rand -base64 32`)',
  });

const Env = z.object({
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/, error: 'must be a postgres:// URL' }),
  TABLEMERE_API_PORT: z.coerce.number().int().min(0).max(65535).default(8787),
  TABLEMERE_API_HOST: z.string().min(1).default('127.0.0.1'),
  /** How clients reach this API; defaults to the listen address. */
  TABLEMERE_PUBLIC_URL: Url.optional(),
  TABLEMERE_SECRET_KEY: SecretKey,
  TABLEMERE_BOOTSTRAP_SECRET: z.string().min(16, { error: 'must be at least 16 characters' }),
  /** Unset for AWS itself; set for any other S3-compatible store. */
  AWS_ENDPOINT_URL: Url.optional(),
  AWS_REGION: z.string().min(1),
  /** Unset: the AWS SDK's default credential chain (instance role, profile, ...). */
  AWS_ACCESS_KEY_ID: z.string().min(1).optional(),
  AWS_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  TABLEMERE_INTAKE_BUCKET: z.string().regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, { error: 'must be an S3 bucket name' }),
  /** The kill switch of every sink route; default on. */
  TABLEMERE_SINKS_ENABLED: Flag.optional(),
  /** The kill switch's deprecated name, read only while TABLEMERE_SINKS_ENABLED is unset (sinksEnabledOf). */
  AL_SINKS_ENABLED: Flag.optional(),
  /** A sink's backlog (bytes and batches waiting for a roll) past which the send route answers 429. */
  TABLEMERE_SINK_MAX_PENDING_BYTES: z.coerce.number().int().min(1).default(1024 * 1024 * 1024),
  TABLEMERE_SINK_MAX_PENDING_BATCHES: z.coerce.number().int().min(1).default(10_000),
  /** The roller's listener (/internal/*): never expose it publicly. */
  TABLEMERE_INTERNAL_HOST: z.string().min(1).default('127.0.0.1'),
  TABLEMERE_INTERNAL_PORT: z.coerce.number().int().min(0).max(65535).default(8789),
  /** PEM certificate (chain) and key: the internal listener serves HTTPS with them; unset, plain HTTP. */
  TABLEMERE_INTERNAL_TLS_CERT_FILE: z.string().min(1).optional(),
  TABLEMERE_INTERNAL_TLS_KEY_FILE: z.string().min(1).optional(),
  /** Set: GET /metrics needs `Authorization: Bearer <token>`; unset, it is open. */
  TABLEMERE_METRICS_TOKEN: MetricsToken.optional(),
  /** How often the maintenance tasks (storage sweep, ledger pruning) run. */
  TABLEMERE_MAINTENANCE_INTERVAL_SECONDS: z.coerce.number().int().min(1).default(3600),
  /** Slow clients: how long the headers, the whole request, a silent connection and an idle keep-alive may take. */
  TABLEMERE_HEADERS_TIMEOUT_MS: Millis(DEFAULT_SERVER_TIMEOUTS.headersMs),
  TABLEMERE_REQUEST_TIMEOUT_MS: Millis(DEFAULT_SERVER_TIMEOUTS.requestMs),
  TABLEMERE_IDLE_TIMEOUT_MS: Millis(DEFAULT_SERVER_TIMEOUTS.idleMs),
  TABLEMERE_KEEP_ALIVE_TIMEOUT_MS: Millis(DEFAULT_SERVER_TIMEOUTS.keepAliveMs),
  /** Body bytes of the sends read or stored at once, in all and per sink, past which the send route answers 503. */
  TABLEMERE_SEND_MAX_BYTES_IN_FLIGHT: Bytes(DEFAULT_IN_FLIGHT_LIMITS.processBytes),
  TABLEMERE_SEND_MAX_BYTES_IN_FLIGHT_PER_SINK: Bytes(DEFAULT_IN_FLIGHT_LIMITS.sinkBytes),
  /**
   * How old a claim must be before a replay takes it over (claim.ts). Shorter than a store
   * write can last only in tests that kill a process on purpose.
   */
  TABLEMERE_STALE_CLAIM_SECONDS: z.coerce.number().int().min(1).default(STALE_CLAIM_SECONDS),
  /**
   * A connection or statement of a request without an answer after this long fails (503
   * database_unavailable / intake_unavailable): a request waits at most about twice this on Postgres.
   */
  TABLEMERE_DB_TIMEOUT_MS: z.coerce.number().int().min(100).default(5_000),
  /** Postgres connections of the requests' pool, per process (the hourly maintenance has 2 more). */
  TABLEMERE_DB_POOL_SIZE: z.coerce.number().int().min(1).max(1000).default(10),
  /** Each catalog call made for a request without an answer after this long fails: 503 catalog_unavailable. */
  TABLEMERE_CATALOG_TIMEOUT_MS: z.coerce.number().int().min(100).default(CATALOG_TIMEOUT_MS),
  /** Each request to the object store (a segment's PUT, a read) without an answer after this long fails: 503 intake_unavailable. */
  TABLEMERE_STORE_TIMEOUT_MS: z.coerce.number().int().min(100).default(DEFAULT_STORE_TIMEOUT_MS),
  /** Test-only: SIGKILL at this point of the first segment that reaches it (segments.ts). */
  TABLEMERE_API_CRASH_AT: z.enum(INTAKE_CRASH_POINTS).optional(),
});

export interface Config {
  databaseUrl: string;
  port: number;
  host: string;
  publicUrl: string;
  secretKey: string;
  bootstrapSecret: string;
  store: {
    endpoint: string | undefined;
    region: string;
    /** Static keys from the environment, or undefined for the SDK's default chain. */
    credentials: { accessKeyId: string; secretAccessKey: string } | undefined;
    intakeBucket: string;
  };
  sinksEnabled: boolean;
  /** Lines to log once at start: deprecated settings still in use. */
  warnings: readonly string[];
  sinkBacklog: { maxPendingBytes: number; maxPendingBatches: number };
  /** The second listener, serving only the roller's /internal routes. */
  internal: { host: string; port: number; tls: InternalTls | undefined };
  /** TABLEMERE_METRICS_TOKEN: the bearer token /metrics needs, or undefined for an open /metrics. */
  metricsToken: string | undefined;
  maintenanceIntervalSeconds: number;
  timeouts: ServerTimeouts;
  sendInFlight: InFlightLimits;
  staleClaimSeconds: number;
  /** The bound on each statement a request runs (pg's query_timeout). */
  dbTimeoutMs: number;
  dbPoolSize: number;
  /** The deadline of each object-store request. */
  storeTimeoutMs: number;
  /** The deadline of each catalog call of a request. */
  catalogTimeoutMs: number;
  intakeCrashAt: IntakeCrashPoint | null;
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|\[::1\]|localhost)$/;
const UNSPECIFIED = /^(0\.0\.0\.0|::|\[::\])$/;

/**
 * Every answer names the API's address (ingest URLs, the OpenAPI servers, key files), so behind a
 * load balancer it must be the one public address, never the address of whichever process
 * answered: required once the API listens beyond the loopback, and never an unspecified address.
 */
function publicUrlProblemOf(publicUrl: string | undefined, host: string): string | undefined {
  if (publicUrl === undefined) {
    return LOOPBACK.test(host) ? undefined : `TABLEMERE_PUBLIC_URL is not set while TABLEMERE_API_HOST is ${host}: set it to the address clients use (the load balancer's)`;
  }
  if (UNSPECIFIED.test(new URL(publicUrl).hostname)) return 'TABLEMERE_PUBLIC_URL names an unspecified address (0.0.0.0 or ::): set it to the address clients use';
  return undefined;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

/**
 * Reads the API's configuration from `env` once, validating every variable; the result is
 * frozen. Throws ConfigError naming each missing or invalid variable (never its value).
 */
export function loadConfig(env: Record<string, string | undefined> = process.env): Readonly<Config> {
  // An empty variable means unset, so `FOO=` in a shell file does not fail validation oddly.
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''));
  const parsed = Env.safeParse(present);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((issue) => {
        const name = String(issue.path[0] ?? '(environment)');
        return present[name] === undefined ? `${name} is not set` : `${name} ${issue.message}`;
      }),
    );
  }
  const e = parsed.data;
  if ((e.AWS_ACCESS_KEY_ID === undefined) !== (e.AWS_SECRET_ACCESS_KEY === undefined)) {
    throw new ConfigError(['AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set together, or neither']);
  }
  const publicUrlProblem = publicUrlProblemOf(e.TABLEMERE_PUBLIC_URL, e.TABLEMERE_API_HOST);
  if (publicUrlProblem) throw new ConfigError([publicUrlProblem]);
  if ((e.TABLEMERE_INTERNAL_TLS_CERT_FILE === undefined) !== (e.TABLEMERE_INTERNAL_TLS_KEY_FILE === undefined)) {
    throw new ConfigError(['TABLEMERE_INTERNAL_TLS_CERT_FILE and TABLEMERE_INTERNAL_TLS_KEY_FILE must be set together, or neither (plain HTTP)']);
  }
  const sinks = sinksEnabledOf(e.TABLEMERE_SINKS_ENABLED, e.AL_SINKS_ENABLED);
  if ('problem' in sinks) throw new ConfigError([sinks.problem]);
  const internalTls = e.TABLEMERE_INTERNAL_TLS_CERT_FILE && e.TABLEMERE_INTERNAL_TLS_KEY_FILE ? readInternalTls(e.TABLEMERE_INTERNAL_TLS_CERT_FILE, e.TABLEMERE_INTERNAL_TLS_KEY_FILE) : undefined;
  if (internalTls && 'problem' in internalTls) throw new ConfigError([internalTls.problem]);
  const config: Config = {
    databaseUrl: e.DATABASE_URL,
    port: e.TABLEMERE_API_PORT,
    host: e.TABLEMERE_API_HOST,
    publicUrl: (e.TABLEMERE_PUBLIC_URL ?? `http://${e.TABLEMERE_API_HOST}:${e.TABLEMERE_API_PORT}`).replace(/\/+$/, ''),
    secretKey: e.TABLEMERE_SECRET_KEY,
    bootstrapSecret: e.TABLEMERE_BOOTSTRAP_SECRET,
    store: {
      endpoint: e.AWS_ENDPOINT_URL,
      region: e.AWS_REGION,
      credentials:
        e.AWS_ACCESS_KEY_ID && e.AWS_SECRET_ACCESS_KEY
          ? { accessKeyId: e.AWS_ACCESS_KEY_ID, secretAccessKey: e.AWS_SECRET_ACCESS_KEY }
          : undefined,
      intakeBucket: e.TABLEMERE_INTAKE_BUCKET,
    },
    sinksEnabled: sinks.enabled,
    warnings: sinks.warning === undefined ? [] : [sinks.warning],
    sinkBacklog: { maxPendingBytes: e.TABLEMERE_SINK_MAX_PENDING_BYTES, maxPendingBatches: e.TABLEMERE_SINK_MAX_PENDING_BATCHES },
    internal: { host: e.TABLEMERE_INTERNAL_HOST, port: e.TABLEMERE_INTERNAL_PORT, tls: internalTls?.tls },
    metricsToken: e.TABLEMERE_METRICS_TOKEN,
    maintenanceIntervalSeconds: e.TABLEMERE_MAINTENANCE_INTERVAL_SECONDS,
    timeouts: {
      headersMs: e.TABLEMERE_HEADERS_TIMEOUT_MS,
      requestMs: e.TABLEMERE_REQUEST_TIMEOUT_MS,
      idleMs: e.TABLEMERE_IDLE_TIMEOUT_MS,
      keepAliveMs: e.TABLEMERE_KEEP_ALIVE_TIMEOUT_MS,
    },
    sendInFlight: { processBytes: e.TABLEMERE_SEND_MAX_BYTES_IN_FLIGHT, sinkBytes: e.TABLEMERE_SEND_MAX_BYTES_IN_FLIGHT_PER_SINK },
    staleClaimSeconds: e.TABLEMERE_STALE_CLAIM_SECONDS,
    dbTimeoutMs: e.TABLEMERE_DB_TIMEOUT_MS,
    dbPoolSize: e.TABLEMERE_DB_POOL_SIZE,
    storeTimeoutMs: e.TABLEMERE_STORE_TIMEOUT_MS,
    catalogTimeoutMs: e.TABLEMERE_CATALOG_TIMEOUT_MS,
    intakeCrashAt: e.TABLEMERE_API_CRASH_AT ?? null,
  };
  return deepFreeze(config);
}

/**
 * The kill switch: TABLEMERE_SINKS_ENABLED, default on. Its deprecated name AL_SINKS_ENABLED is
 * still read when the new one is unset (with a warning to log); both set and meaning different
 * things is refused, as either answer would surprise someone.
 */
export function sinksEnabledOf(current: boolean | undefined, deprecated: boolean | undefined): { enabled: boolean; warning?: string } | { problem: string } {
  if (deprecated === undefined) return { enabled: current ?? true };
  if (current !== undefined && current !== deprecated) {
    return { problem: `TABLEMERE_SINKS_ENABLED is ${current} but the deprecated AL_SINKS_ENABLED is ${deprecated}: remove AL_SINKS_ENABLED (or make both the same)` };
  }
  const warning =
    current === undefined
      ? 'AL_SINKS_ENABLED is deprecated: rename it to TABLEMERE_SINKS_ENABLED (it is read only while TABLEMERE_SINKS_ENABLED is unset)'
      : 'AL_SINKS_ENABLED is deprecated and ignored beside TABLEMERE_SINKS_ENABLED: remove it';
  return { enabled: deprecated, warning };
}

function deepFreeze<T extends object>(value: T): Readonly<T> {
  for (const child of Object.values(value)) {
    if (child && typeof child === 'object') deepFreeze(child);
  }
  return Object.freeze(value);
}
