/**
 * The sink-roller service. Until the roll pipeline lands (issue 5) it only ticks and reports
 * health, so the stack can start, supervise and stop it like the real thing.
 */
import { createServer } from 'node:http';
import pino from 'pino';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { loadConfig } from './config.ts';

const config = loadConfig(process.env);
const log = pino({ level: config.LOG_LEVEL, base: { service: 'roller' } });
const registry = new Registry();
collectDefaultMetrics({ register: registry });

const server = createServer((req, res) => {
  if (req.url === '/healthz') {
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
  } else if (req.url === '/metrics') {
    void registry.metrics().then((body) => res.writeHead(200, { 'content-type': registry.contentType }).end(body));
  } else {
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"code":"not_found","message":"no such route"}}');
  }
});
server.listen(config.TABLEMERE_ROLLER_PORT, config.TABLEMERE_ROLLER_HOST, () => {
  log.info({ port: config.TABLEMERE_ROLLER_PORT, tick_seconds: config.TABLEMERE_ROLLER_TICK_SECONDS }, 'roller started; idle: no roll pipeline yet');
});

const tick = setInterval(() => log.debug('tick'), config.TABLEMERE_ROLLER_TICK_SECONDS * 1000);

const shutdown = (signal: string) => {
  log.info({ signal }, 'roller stopping');
  clearInterval(tick);
  server.close(() => process.exit(0));
};
process.on('SIGINT', () => shutdown('SIGINT'));
process.on('SIGTERM', () => shutdown('SIGTERM'));
