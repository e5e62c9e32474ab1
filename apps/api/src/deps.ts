import type { S3Client } from '@aws-sdk/client-s3';
import type { Pool } from '@tablemere/db';
import type { FastifyBaseLogger } from 'fastify';
import type { CatalogConnections } from './domain/catalogs.ts';
import type { IntakeCrashPoint } from './domain/intake/segments.ts';
import type { BacklogLimits } from './domain/intake/backlog.ts';
import type { LegacyDigests } from './domain/intake/body-digest.ts';
import type { InFlightLimits } from './domain/intake/in-flight.ts';
import type { SecretBox } from './domain/secrets.ts';
import type { InternalTls } from './http/internal-tls.ts';
import type { ApiMetrics } from './http/metrics.ts';
import type { ServerTimeouts } from './http/server-limits.ts';

/** Everything the app talks to, built by the caller (start.ts, or a test) and injected. */
export interface AppDeps {
  /** A pino logger; build it with `createLogger` so secrets are redacted. */
  logger: FastifyBaseLogger;
  pool: Pool;
  /** Seals and opens warehouse secrets (TABLEMERE_SECRET_KEY). */
  secrets: SecretBox;
  /** The platform's own store (intake), with platform credentials. */
  s3: S3Client;
  intakeBucket: string;
  /** How clients reach this API (TABLEMERE_PUBLIC_URL), shown by /v1/connection. */
  publicUrl: string;
  /** Catalog clients per warehouse; one is created when not given. */
  catalogs?: CatalogConnections;
  /** Deadline of each /readyz check; default 2 s. */
  readinessTimeoutMs?: number;
  /** Largest request body accepted on control-plane routes; default 1 MiB. */
  bodyLimit?: number;
  /** Prometheus metrics served at /metrics; a fresh registry when not given. */
  metrics?: ApiMetrics;
  /** TABLEMERE_METRICS_TOKEN: when given, /metrics needs it as a bearer token (401 otherwise); default none, an open /metrics. */
  metricsToken?: string;
  /** TABLEMERE_SINKS_ENABLED; default true. */
  sinksEnabled?: boolean;
  /** Caps on a sink's backlog before the send route answers 429; default 1 GiB / 10,000 batches. */
  sinkBacklog?: BacklogLimits;
  /** Caps on the body bytes of sends in flight, per process and per sink, past which the send route answers 503; default 512 / 128 MiB. */
  sendInFlight?: InFlightLimits;
  /** Header, whole-request, idle and keep-alive timeouts of the listener; defaults in http/server-limits.ts. */
  timeouts?: ServerTimeouts;
  /** How old a claim must be before a replay takes it over; default STALE_CLAIM_SECONDS (120). */
  staleClaimSeconds?: number;
  /** The deadline of each catalog call made for a request (TABLEMERE_CATALOG_TIMEOUT_MS); default 10 s. */
  catalogTimeoutMs?: number;
  /** The deadline of each request to a warehouse's own sink bucket (the platform's is `s3`'s own); default 10 s. */
  storeTimeoutMs?: number;
  /** Test-only: where the intake SIGKILLs its process (segments.ts); default none. */
  intakeCrashAt?: IntakeCrashPoint | null;
  /** Whether sends are also hashed with SHA-256, for ledger rows of before migration 0018; one that looks at `pool` when not given. */
  legacyDigests?: LegacyDigests;
}

/** What route handlers receive: the deps with defaults filled in. */
export type RouteDeps = Required<Omit<AppDeps, 'logger' | 'bodyLimit' | 'timeouts' | 'metricsToken' | 'catalogTimeoutMs'>>;

/** The internal app (/internal/*, the roller's API): never served on the public listener. */
export interface InternalAppDeps {
  logger: FastifyBaseLogger;
  pool: Pool;
  secrets: SecretBox;
  intakeBucket: string;
  /** TABLEMERE_BOOTSTRAP_SECRET: the bearer token every internal request must carry. */
  bootstrapSecret: string;
  /** TABLEMERE_SINKS_ENABLED; when false the sink list tells the roller to idle. Default true. */
  sinksEnabled?: boolean;
  /** As for the public app. */
  timeouts?: ServerTimeouts;
  /** TABLEMERE_INTERNAL_TLS_*: the listener serves HTTPS with this certificate and key; default plain HTTP. */
  tls?: InternalTls;
}

export type InternalRouteDeps = Required<Omit<InternalAppDeps, 'logger' | 'bootstrapSecret' | 'timeouts' | 'tls'>>;
