import type { S3Client } from '@aws-sdk/client-s3';
import type { InternalSink } from '@tablemere/contracts';
import { createS3Client, ObjectStore } from '@tablemere/store';
import type { Logger } from 'pino';
import type { RollerConfig } from './config.ts';
import { CrashHook } from './crash.ts';
import { InternalApi } from './internal-api.ts';
import { LeftLeases } from './lease.ts';
import type { RollerMetrics } from './metrics.ts';
import type { RollDeps } from './roll/context.ts';
import { TenantCatalogs } from './roll/reload.ts';
import { SweepSchedule } from './roll/sweep.ts';

/** The clients and caches every roll of this process shares, built once from the config. */
export function createRollDeps(config: Readonly<RollerConfig>, log: Logger, metrics: RollerMetrics): RollDeps & { close(): void } {
  const s3 = createS3Client({
    region: config.store.region,
    ...(config.store.endpoint ? { endpoint: config.store.endpoint } : {}),
    ...(config.store.credentials ? { credentials: config.store.credentials } : {}),
    // Each request bounded (a 16 MiB batch read included: on a link slower than 16 MiB per
    // bound, raise TABLEMERE_ROLLER_CALL_TIMEOUT_SECONDS); one retry, so a store out of reach
    // fails the roll as store_unavailable within about two bounds.
    requestTimeoutMs: config.callTimeoutMs,
    maxAttempts: 2,
  });
  // One store per bucket of the platform, and one per warehouse with a sink_bucket, reached as
  // the warehouse (its endpoint, region and keys): made again when a PATCH changed those.
  const stores = new Map<string, { settings: string; store: ObjectStore }>();
  const warehouseClients: S3Client[] = [];
  const warehouseClient = ({ endpoint, region, access_key_id, secret_access_key }: InternalSink['warehouse']['s3']): S3Client => {
    const credentials = access_key_id && secret_access_key ? { credentials: { accessKeyId: access_key_id, secretAccessKey: secret_access_key } } : {};
    const client = createS3Client({ endpoint, region, ...credentials, requestTimeoutMs: config.callTimeoutMs, maxAttempts: 2 });
    warehouseClients.push(client);
    return client;
  };
  const api = new InternalApi({ url: config.api.url, secret: config.api.secret, timeoutMs: config.callTimeoutMs, ...(config.api.ca ? { ca: config.api.ca } : {}) });
  const leaseMarginMs = Math.min(30_000, (config.leaseSeconds * 1000) / 4);
  return {
    api,
    intake({ intake, warehouse }) {
      const id = intake.identity === 'platform' ? `platform/${intake.bucket}` : `warehouse/${warehouse.id}`;
      const settings = intake.identity === 'platform' ? '' : JSON.stringify([warehouse.s3, intake.bucket]);
      const kept = stores.get(id);
      if (kept?.settings === settings) return kept.store;
      const store = new ObjectStore(intake.identity === 'platform' ? s3 : warehouseClient(warehouse.s3), intake.bucket);
      stores.set(id, { settings, store });
      return store;
    },
    catalogs: new TenantCatalogs(config.callTimeoutMs),
    leftLeases: new LeftLeases(api, log, leaseMarginMs),
    metrics,
    crash: new CrashHook(config.crashAt),
    log,
    sweeps: new SweepSchedule(config.sweepSeconds * 1000),
    settings: {
      rejectsRetentionSeconds: config.rejectsRetentionSeconds,
      leaseMarginMs,
      upkeep: config.upkeep,
    },
    close: () => {
      api.close();
      s3.destroy();
      for (const client of warehouseClients) client.destroy();
    },
  };
}

/** Where the intake store's credentials come from, for the start-up line (never the secrets). */
export function credentialsSource(config: Readonly<RollerConfig>): string {
  return config.store.credentials ? 'environment (AWS_ACCESS_KEY_ID)' : 'AWS default credential chain';
}
