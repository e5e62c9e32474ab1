/**
 * The floor of any send route written in Node: an HTTP server that reads each POST body and
 * stores it with the same signed PUT the intake uses, and nothing else (no key check, no
 * JSON check, no ledger). bench:intake runs it as its own process beside the API, so the
 * API's cost above a bare PUT splits into what Node's HTTP in and out costs and what the
 * intake itself adds.
 *
 *   TABLEMERE_RELAY_PORT=... tsx scripts/bench/relay.ts
 */
import http from 'node:http';
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

const server = http.createServer((req, res) => {
  // Anything but a batch (the bench's readiness probe) is answered without touching the store.
  if (req.method !== 'POST') {
    res.writeHead(404).end();
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const key = `${prefix}${String(req.headers['idempotency-key'])}.ndjson`;
    store
      .put(key, Buffer.concat(chunks), { contentType: 'application/x-ndjson', metadata: { rows: '100' }, ifAbsent: true })
      .then(() => {
        res.writeHead(202, { 'content-type': 'application/json' }).end('{}');
      })
      .catch((error: unknown) => {
        res.writeHead(503).end(String(error));
      });
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.TABLEMERE_RELAY_PORT), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
