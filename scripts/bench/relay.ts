/**
 * The floor of any send route written in Node: an HTTP server that reads each POST body and
 * stores it with the same signed PUT the intake uses, and nothing else (no key check, no
 * JSON check, no ledger). bench:intake runs it as its own process beside the API, so the
 * API's cost above a bare PUT splits into what Node's HTTP in and out costs and what the
 * intake itself adds. With TABLEMERE_RELAY_FASTIFY=1 the same relay is one Fastify route
 * (the API's framework, with its defaults: a request logger off, the body as a Buffer), which
 * splits the rest again: what the framework costs and what the intake's own steps cost.
 *
 *   TABLEMERE_RELAY_PORT=... [TABLEMERE_RELAY_FASTIFY=1] tsx scripts/bench/relay.ts
 */
import http from 'node:http';
import Fastify from 'fastify';
import { createS3Client, ObjectStore } from '@tablemere/store';
import { stackEnv } from '../../tests/support/stack.ts';

const env = stackEnv();
const s3 = createS3Client({
  endpoint: env.AWS_ENDPOINT_URL!,
  region: env.AWS_REGION!,
  credentials: { accessKeyId: env.AWS_ACCESS_KEY_ID!, secretAccessKey: env.AWS_SECRET_ACCESS_KEY! },
});
const store = new ObjectStore(s3, env.TABLEMERE_INTAKE_BUCKET!);
const prefix = process.env.TABLEMERE_RELAY_PREFIX ?? 'bench-relay/';
const port = Number(process.env.TABLEMERE_RELAY_PORT);

const storeBatch = (batchId: unknown, body: Buffer) =>
  store.put(`${prefix}${String(batchId)}.ndjson`, body, { contentType: 'application/x-ndjson', metadata: { rows: '100' }, ifAbsent: true });

function plainRelay(): void {
  const server = http.createServer((req, res) => {
    // Anything but a batch (the bench's readiness probe) is answered without touching the store.
    if (req.method !== 'POST') {
      res.writeHead(404).end();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      storeBatch(req.headers['idempotency-key'], Buffer.concat(chunks))
        .then(() => {
          res.writeHead(202, { 'content-type': 'application/json' }).end('{}');
        })
        .catch((error: unknown) => {
          res.writeHead(503).end(String(error));
        });
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(port, '127.0.0.1');
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
}

async function fastifyRelay(): Promise<void> {
  const app = Fastify({ bodyLimit: 16 * 1024 * 1024, keepAliveTimeout: 60_000 });
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
  app.post('/v1/sinks/:sink', async (request, reply) => {
    await storeBatch(request.headers['idempotency-key'], request.body as Buffer);
    return reply.code(202).send({});
  });
  await app.listen({ port, host: '127.0.0.1' });
  process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
}

if (process.env.TABLEMERE_RELAY_FASTIFY === '1') await fastifyRelay();
else plainRelay();
