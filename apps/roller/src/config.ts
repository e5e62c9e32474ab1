import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { z } from 'zod';
import { CRASH_POINTS } from './crash.ts';

const Seconds = z.coerce.number().positive();
const WholeSeconds = z.coerce.number().int().positive();

/** The least orphan safety age the environment may set; only tests construct a shorter one. */
export const ORPHAN_AGE_FLOOR_SECONDS = 86_400;

const retired = (setting: string) =>
  z.undefined({ error: `is no longer read: set ${setting} on each sink (tablemere sink update <sink> or PATCH /v1/sinks/{id}), then unset it` }).optional();

const Env = z
  .object({
    TABLEMERE_ROLLER_HOST: z.string().min(1).default('127.0.0.1'),
    TABLEMERE_ROLLER_PORT: z.coerce.number().int().min(0).max(65535).default(8788),
    /** The API's internal listener; defaults to 127.0.0.1 on TABLEMERE_INTERNAL_PORT. */
    TABLEMERE_INTERNAL_URL: z.url({ protocol: /^https?$/ }).optional(),
    TABLEMERE_INTERNAL_PORT: z.coerce.number().int().min(1).max(65535).default(8789),
    /** PEM certificates to trust for an https:// TABLEMERE_INTERNAL_URL (a private CA); unset, the system's CAs. */
    TABLEMERE_INTERNAL_CA_FILE: z.string().min(1).optional(),
    /** Set: GET /metrics needs `Authorization: Bearer <token>`; unset, it is open. */
    TABLEMERE_METRICS_TOKEN: z.string().regex(/^[\x21-\x7e]{16,}$/, 'must be at least 16 printable characters without spaces').optional(),
    TABLEMERE_BOOTSTRAP_SECRET: z.string().min(1, 'is required: the bearer token of the internal API'),
    /** The platform's store, where the intake keeps batches. */
    AWS_ENDPOINT_URL: z.url().optional(),
    AWS_REGION: z.string().min(1).default('us-east-1'),
    AWS_ACCESS_KEY_ID: z.string().min(1).optional(),
    AWS_SECRET_ACCESS_KEY: z.string().min(1).optional(),
    AWS_SESSION_TOKEN: z.string().min(1).optional(),
    TABLEMERE_ROLLER_ID: z.string().regex(/^[A-Za-z0-9._:@/-]{1,128}$/).optional(),
    TABLEMERE_ROLLER_TICK_SECONDS: Seconds.default(10),
    /** Rolls running at once across sinks. */
    TABLEMERE_ROLLER_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
    /**
     * Lease time to live; renewed every third of it while a roll runs. Also the longest a sink
     * waits for a lease nobody can give back (a holder that died, or an answer lost on the way).
     */
    TABLEMERE_ROLLER_LEASE_SECONDS: z.coerce.number().int().min(15).max(3600).default(60),
    /**
     * The bound of every request to the internal API, the store and the catalog: no answer in
     * this long and the request fails (api_error, store_unavailable, catalog_unavailable).
     */
    TABLEMERE_ROLLER_CALL_TIMEOUT_SECONDS: z.coerce.number().min(0.5).max(600).default(10),
    /** How often every sink is surveyed: lag gauges, and sinks whose table went missing. */
    TABLEMERE_ROLLER_SURVEY_SECONDS: Seconds.default(60),
    /** How long a stop waits for running rolls before abandoning them at a safe point. */
    TABLEMERE_ROLLER_SHUTDOWN_SECONDS: Seconds.default(30),
    TABLEMERE_ROLLER_REJECTS_RETENTION_SECONDS: WholeSeconds.default(7 * 24 * 3600),
    /** Rejects of one sink are swept at most this often (per process). */
    TABLEMERE_ROLLER_SWEEP_SECONDS: Seconds.default(3600),
    /** Upkeep of each sink's table at most this often, after it rolled; 0 leaves upkeep to the operator command. */
    TABLEMERE_ROLLER_UPKEEP_SECONDS: z.coerce.number().int().min(0).default(3600),
    /** Snapshot retention is each sink's own now (keep_snapshots, min_snapshot_age_seconds): the old knobs are refused, not ignored. */
    TABLEMERE_ROLLER_UPKEEP_KEEP_SNAPSHOTS: retired('keep_snapshots'),
    TABLEMERE_ROLLER_UPKEEP_MIN_SNAPSHOT_AGE_SECONDS: retired('min_snapshot_age_seconds'),
    /**
     * Unreferenced files younger than this are never deleted as orphans: a writer may still be
     * about to commit them. Java's default, 3 days; at least a day, the floor of Java's Spark
     * procedure (`remove_orphan_files`), since an owner's engine may take hours between
     * writing a file and committing it.
     */
    TABLEMERE_ROLLER_UPKEEP_ORPHAN_AGE_SECONDS: z.coerce.number().int().min(ORPHAN_AGE_FLOOR_SECONDS, `at least ${ORPHAN_AGE_FLOOR_SECONDS} (a day)`).default(3 * 86_400),
    /** Compaction's target file size; unset: the table's write.target-file-size-bytes (Iceberg's default 512 MiB). */
    TABLEMERE_ROLLER_UPKEEP_TARGET_FILE_BYTES: z.coerce.number().int().min(1024).optional(),
    /** Fewer small data files than this are left alone. */
    TABLEMERE_ROLLER_UPKEEP_MIN_INPUT_FILES: z.coerce.number().int().min(2).default(2),
    /** Test hook: SIGKILL this process when a roll reaches the named point. */
    TABLEMERE_ROLLER_CRASH_AT: z.enum(CRASH_POINTS).optional(),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace']).default('info'),
  })
  .refine((e) => (e.AWS_ACCESS_KEY_ID === undefined) === (e.AWS_SECRET_ACCESS_KEY === undefined), {
    message: 'set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY together, or neither (default credential chain)',
    path: ['AWS_SECRET_ACCESS_KEY'],
  });

export interface RollerConfig {
  http: { host: string; port: number };
  /** `ca`: the PEM text of TABLEMERE_INTERNAL_CA_FILE, trusted for the internal API's certificate. */
  api: { url: string; secret: string; ca: string | undefined };
  /** TABLEMERE_METRICS_TOKEN, or undefined for an open /metrics. */
  metricsToken: string | undefined;
  store: {
    endpoint: string | undefined;
    region: string;
    credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string } | undefined;
  };
  rollerId: string;
  tickSeconds: number;
  concurrency: number;
  leaseSeconds: number;
  /** Bound of one request to the internal API, the store or the catalog. */
  callTimeoutMs: number;
  surveySeconds: number;
  shutdownSeconds: number;
  rejectsRetentionSeconds: number;
  sweepSeconds: number;
  upkeep: UpkeepSettings;
  crashAt: (typeof CRASH_POINTS)[number] | undefined;
  logLevel: string;
}

export interface UpkeepSettings {
  /** 0: the loop never starts upkeep (the operator command still runs it). */
  intervalSeconds: number;
  /** Orphan files younger than this stay; the environment cannot set it under ORPHAN_AGE_FLOOR_SECONDS. */
  orphanAgeMs: number;
  targetFileBytes: number | undefined;
  minInputFiles: number;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly problems: string[]) {
    super(`roller configuration is invalid: ${problems.join('; ')}`);
  }
}

/** Reads the environment once, at start-up; every problem is named in one message. */
export function loadConfig(env: Record<string, string | undefined>): Readonly<RollerConfig> {
  const parsed = Env.safeParse(env);
  if (!parsed.success) throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`));
  const e = parsed.data;
  const apiUrl = (e.TABLEMERE_INTERNAL_URL ?? `http://127.0.0.1:${e.TABLEMERE_INTERNAL_PORT}`).replace(/\/+$/, '');
  const ca = e.TABLEMERE_INTERNAL_CA_FILE === undefined ? undefined : readCaFile(e.TABLEMERE_INTERNAL_CA_FILE, apiUrl);
  const config: RollerConfig = {
    http: { host: e.TABLEMERE_ROLLER_HOST, port: e.TABLEMERE_ROLLER_PORT },
    api: { url: apiUrl, secret: e.TABLEMERE_BOOTSTRAP_SECRET, ca },
    metricsToken: e.TABLEMERE_METRICS_TOKEN,
    store: {
      endpoint: e.AWS_ENDPOINT_URL,
      region: e.AWS_REGION,
      credentials:
        e.AWS_ACCESS_KEY_ID && e.AWS_SECRET_ACCESS_KEY
          ? { accessKeyId: e.AWS_ACCESS_KEY_ID, secretAccessKey: e.AWS_SECRET_ACCESS_KEY, ...(e.AWS_SESSION_TOKEN ? { sessionToken: e.AWS_SESSION_TOKEN } : {}) }
          : undefined,
    },
    rollerId: e.TABLEMERE_ROLLER_ID ?? `${hostname().replace(/[^A-Za-z0-9._-]/g, '-').slice(0, 100)}:${process.pid}`,
    tickSeconds: e.TABLEMERE_ROLLER_TICK_SECONDS,
    concurrency: e.TABLEMERE_ROLLER_CONCURRENCY,
    leaseSeconds: e.TABLEMERE_ROLLER_LEASE_SECONDS,
    callTimeoutMs: Math.round(e.TABLEMERE_ROLLER_CALL_TIMEOUT_SECONDS * 1000),
    surveySeconds: e.TABLEMERE_ROLLER_SURVEY_SECONDS,
    shutdownSeconds: e.TABLEMERE_ROLLER_SHUTDOWN_SECONDS,
    rejectsRetentionSeconds: e.TABLEMERE_ROLLER_REJECTS_RETENTION_SECONDS,
    sweepSeconds: e.TABLEMERE_ROLLER_SWEEP_SECONDS,
    upkeep: {
      intervalSeconds: e.TABLEMERE_ROLLER_UPKEEP_SECONDS,
      orphanAgeMs: e.TABLEMERE_ROLLER_UPKEEP_ORPHAN_AGE_SECONDS * 1000,
      targetFileBytes: e.TABLEMERE_ROLLER_UPKEEP_TARGET_FILE_BYTES,
      minInputFiles: e.TABLEMERE_ROLLER_UPKEEP_MIN_INPUT_FILES,
    },
    crashAt: e.TABLEMERE_ROLLER_CRASH_AT,
    logLevel: e.LOG_LEVEL,
  };
  return Object.freeze(config);
}

/**
 * The PEM text of TABLEMERE_INTERNAL_CA_FILE, read at start-up: a file that cannot be read or
 * holds no certificate, or a CA for a plain http:// URL, is a configuration error.
 */
function readCaFile(file: string, apiUrl: string): string {
  if (!apiUrl.startsWith('https:')) {
    throw new ConfigError([`TABLEMERE_INTERNAL_CA_FILE: is set but the internal API URL (${apiUrl}) is plain http://; use an https:// TABLEMERE_INTERNAL_URL`]);
  }
  let pem: string;
  try {
    pem = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError([`TABLEMERE_INTERNAL_CA_FILE: ${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'unreadable'})`]);
  }
  try {
    if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new Error('no "BEGIN CERTIFICATE" block');
    new X509Certificate(pem);
  } catch (error) {
    throw new ConfigError([`TABLEMERE_INTERNAL_CA_FILE: ${file} is not a PEM certificate (${error instanceof Error ? error.message : String(error)})`]);
  }
  return pem;
}
