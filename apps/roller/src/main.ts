/**
 * The sink-roller service: a tick loop rolling due sinks, /healthz and /metrics on
 * TABLEMERE_ROLLER_PORT, and a clean stop on SIGINT/SIGTERM (running rolls finish, or stop at
 * a safe point after TABLEMERE_ROLLER_SHUTDOWN_SECONDS; leases are released).
 */
import { createServer } from 'node:http';
import { carriesBearer } from '@tablemere/contracts';
import type { AddressInfo } from 'node:net';
import { ConfigError, loadConfig } from './config.ts';
import { createRollDeps, credentialsSource } from './deps.ts';
import { createLogger } from './log.ts';
import { RollerMetrics } from './metrics.ts';
import { Roller } from './roller.ts';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig(process.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    createLogger().fatal({ problems: error.problems }, error.message);
    process.exitCode = 1;
    return;
  }
  const log = createLogger({ level: config.logLevel });
  const metrics = new RollerMetrics();
  const deps = createRollDeps(config, log, metrics);
  const roller = new Roller(deps, {
    rollerId: config.rollerId,
    leaseSeconds: config.leaseSeconds,
    concurrency: config.concurrency,
    tickSeconds: config.tickSeconds,
    surveySeconds: config.surveySeconds,
    upkeepSeconds: config.upkeep.intervalSeconds,
  });

  const server = createServer((req, res) => {
    if (req.url === '/healthz' || req.url === '/readyz') {
      // /healthz: the process runs. /readyz: it reached its internal API within the last three
      // ticks, so it can roll: a roller cut off from its API says so instead of "ok".
      const ready = roller.lastTickAt !== null && Date.now() - roller.lastTickAt.getTime() <= 3 * config.tickSeconds * 1000;
      const ok = req.url === '/healthz' || ready;
      const body = { status: ok ? 'ok' : 'unavailable', roller_id: config.rollerId, in_flight: roller.inFlight, last_tick_at: roller.lastTickAt?.toISOString() ?? null };
      res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    } else if (req.url === '/metrics' && config.metricsToken !== undefined && !carriesBearer(req.headers.authorization, config.metricsToken)) {
      res
        .writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer realm="metrics"' })
        .end('{"error":{"code":"unauthorized","message":"This /metrics needs \\"Authorization: Bearer <TABLEMERE_METRICS_TOKEN>\\"."}}');
    } else if (req.url === '/metrics') {
      metrics.registry.metrics().then(
        (body) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(body),
        () => res.writeHead(500).end(),
      );
    } else {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"code":"not_found","message":"no such route; try /healthz, /readyz or /metrics"}}');
    }
  });
  await new Promise<void>((resolve) => server.listen(config.http.port, config.http.host, resolve));
  const { port } = server.address() as AddressInfo;
  log.info(
    {
      roller_id: config.rollerId,
      node: process.version,
      address: `http://${config.http.host}:${port}`,
      internal_api: config.api.url,
      internal_ca: config.api.ca === undefined ? 'system' : 'TABLEMERE_INTERNAL_CA_FILE',
      metrics_token: config.metricsToken !== undefined,
      store: config.store.endpoint ?? `AWS S3 (${config.store.region})`,
      store_credentials: credentialsSource(config),
      tick_seconds: config.tickSeconds,
      concurrency: config.concurrency,
      lease_seconds: config.leaseSeconds,
      upkeep_seconds: config.upkeep.intervalSeconds,
      ...(config.crashAt ? { crash_at: config.crashAt } : {}),
    },
    `tablemere roller ${config.rollerId} started; rolling through ${config.api.url}`,
  );
  if (config.api.url.startsWith('http:') && !/^http:\/\/(127\.\d+\.\d+\.\d+|\[::1\]|localhost)(:|\/|$)/.test(config.api.url)) {
    log.warn('the internal API is plain http:// beyond the loopback: its sink list carries warehouse secrets; serve it over TLS (TABLEMERE_INTERNAL_TLS_* on the API, an https:// TABLEMERE_INTERNAL_URL here)');
  }
  roller.start();

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal, in_flight: roller.inFlight }, 'stopping: finishing running rolls');
    await roller.stop(config.shutdownSeconds * 1000);
    await new Promise((resolve) => server.close(resolve));
    deps.close();
    log.info('stopped');
    log.flush();
  };
  process.once('SIGINT', () => void stop('SIGINT'));
  process.once('SIGTERM', () => void stop('SIGTERM'));
}

await main();
