import { createS3Client, ObjectStore } from '@tablemere/store';
import type { Logger } from 'pino';
import type { RollerConfig } from './config.ts';
import { CrashHook } from './crash.ts';
import { InternalApi } from './internal-api.ts';
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
    // A 16 MiB batch read or a 1,000-key delete on a slow link.
    requestTimeoutMs: 60_000,
    maxAttempts: 3,
  });
  const stores = new Map<string, ObjectStore>();
  return {
    api: new InternalApi({ url: config.api.url, secret: config.api.secret }),
    intake(bucket) {
      let store = stores.get(bucket);
      if (!store) stores.set(bucket, (store = new ObjectStore(s3, bucket)));
      return store;
    },
    catalogs: new TenantCatalogs(),
    metrics,
    crash: new CrashHook(config.crashAt),
    log,
    sweeps: new SweepSchedule(config.sweepSeconds * 1000),
    settings: {
      rejectsRetentionSeconds: config.rejectsRetentionSeconds,
      leaseMarginMs: Math.min(30_000, (config.leaseSeconds * 1000) / 4),
      upkeep: config.upkeep,
    },
    close: () => s3.destroy(),
  };
}

/** Where the intake store's credentials come from, for the start-up line (never the secrets). */
export function credentialsSource(config: Readonly<RollerConfig>): string {
  return config.store.credentials ? 'environment (AWS_ACCESS_KEY_ID)' : 'AWS default credential chain';
}
