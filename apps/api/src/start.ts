import './runtime/heap-tuning.ts';
import { createPool, databaseHost, migrate, MigrationError } from '@tablemere/db';
import { createS3Client } from '@tablemere/store';
import { buildApp, buildInternalApp } from './app.ts';
import { ConfigError, loadConfig } from './config.ts';
import { Maintenance, maintenanceTasks } from './domain/maintenance.ts';
import { SecretBox } from './domain/secrets.ts';
import { createLogger } from './logger.ts';
import { mallocTrim } from './runtime/malloc-trim.ts';
import { bodyDigestImplementation } from './domain/intake/body-digest.ts';
import { jsonCheckImplementation } from './domain/intake/native-scan.ts';
import { returnMemoryAfterBursts } from './runtime/memory-return.ts';

/** The API process: config once, migrations, listen, and a clean stop on SIGINT/SIGTERM. */
async function main(): Promise<void> {
  const logger = createLogger();
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      logger.fatal({ problems: error.problems }, error.message);
      process.exitCode = 1;
      return;
    }
    throw error;
  }
  for (const warning of config.warnings) logger.warn(warning);

  let applied: string[];
  try {
    ({ applied } = await migrate(config.databaseUrl));
  } catch (error) {
    // A database a newer release migrated (an upgrade under way), or a changed migration file:
    // one line that says so, not a stack trace, and no start.
    if (!(error instanceof MigrationError)) throw error;
    logger.fatal({ kind: error.kind }, `cannot start on this database: ${error.message}`);
    process.exitCode = 1;
    return;
  }
  const pool = createPool(config.databaseUrl, {
    applicationName: 'tablemere-api',
    queryTimeoutMillis: config.dbTimeoutMs,
    max: config.dbPoolSize,
    // A restarted or failed-over Postgres ends every idle connection: the pool drops them and
    // opens new ones on demand, and sends answer 503 intake_unavailable until it is back.
    onIdleError: (error) => logger.warn({ err: { message: error.message, code: (error as { code?: string }).code } }, 'postgres connection lost'),
  });
  const s3 = createS3Client({
    requestTimeoutMs: config.storeTimeoutMs,
    region: config.store.region,
    ...(config.store.endpoint ? { endpoint: config.store.endpoint } : {}),
    ...(config.store.credentials ? { credentials: config.store.credentials } : {}),
  });
  const secrets = SecretBox.fromBase64(config.secretKey);
  const app = buildApp({
    logger,
    pool,
    s3,
    secrets,
    intakeBucket: config.store.intakeBucket,
    publicUrl: config.publicUrl,
    sinksEnabled: config.sinksEnabled,
    sinkBacklog: config.sinkBacklog,
    sendInFlight: config.sendInFlight,
    timeouts: config.timeouts,
    staleClaimSeconds: config.staleClaimSeconds,
    storeTimeoutMs: config.storeTimeoutMs,
    catalogTimeoutMs: config.catalogTimeoutMs,
    intakeCrashAt: config.intakeCrashAt,
    ...(config.metricsToken ? { metricsToken: config.metricsToken } : {}),
  });
  const internalApp = buildInternalApp({
    logger,
    pool,
    secrets,
    intakeBucket: config.store.intakeBucket,
    bootstrapSecret: config.bootstrapSecret,
    sinksEnabled: config.sinksEnabled,
    timeouts: config.timeouts,
    ...(config.internal.tls ? { tls: config.internal.tls } : {}),
  });
  // The hourly maintenance is not a request: its pool has no statement bound (a day's prune may
  // take seconds at fleet scale) and does not take connections from the requests' pool.
  const maintenancePool = createPool(config.databaseUrl, {
    applicationName: 'tablemere-api-maintenance',
    max: 2,
    onIdleError: (error) => logger.warn({ err: { message: error.message } }, 'postgres connection lost (maintenance)'),
  });
  const maintenance = new Maintenance({
    pool: maintenancePool,
    logger,
    tasks: maintenanceTasks(maintenancePool, secrets, logger),
    intervalSeconds: config.maintenanceIntervalSeconds,
  });

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping');
    try {
      await maintenance.stop();
      await Promise.all([app.close(), internalApp.close()]);
      await Promise.all([pool.end(), maintenancePool.end()]);
      s3.destroy();
    } finally {
      logger.flush();
    }
  };
  process.once('SIGINT', () => void stop('SIGINT'));
  process.once('SIGTERM', () => void stop('SIGTERM'));

  // Fastify logs its own "listening" line per address; the one below says more, so it is the only one.
  const level = app.log.level;
  app.log.level = internalApp.log.level = 'warn';
  const address = await app.listen({ host: config.host, port: config.port });
  const internalAddress = await internalApp.listen({ host: config.internal.host, port: config.internal.port });
  app.log.level = internalApp.log.level = level;
  maintenance.start();
  returnMemoryAfterBursts();
  logger.info(
    {
      address,
      internal_address: internalAddress,
      node: process.version,
      maintenance_interval_seconds: config.maintenanceIntervalSeconds,
      public_url: config.publicUrl,
      database: databaseHost(config.databaseUrl),
      migrations_applied: applied.length,
      store: config.store.endpoint ?? `AWS S3 (${config.store.region})`,
      intake_bucket: config.store.intakeBucket,
      store_credentials: config.store.credentials ? 'environment (AWS_ACCESS_KEY_ID)' : 'AWS default credential chain',
      sinks_enabled: config.sinksEnabled,
      internal_tls: config.internal.tls !== undefined,
      metrics_token: config.metricsToken !== undefined,
      // Whether memory freed after a burst goes back to the system (glibc's malloc_trim; research/42).
      malloc_trim: mallocTrim !== undefined,
      body_digest: bodyDigestImplementation,
      json_check: jsonCheckImplementation,
    },
    `tablemere api listening on ${address}`,
  );
  if (!config.internal.tls && !/^(127\.\d+\.\d+\.\d+|::1|localhost)$/.test(config.internal.host)) {
    logger.warn(
      { internal_address: internalAddress },
      'the internal listener serves plain HTTP beyond the loopback: GET /internal/sinks carries warehouse secrets; set TABLEMERE_INTERNAL_TLS_CERT_FILE and TABLEMERE_INTERNAL_TLS_KEY_FILE, and keep it on a private network',
    );
  }
}

await main();
