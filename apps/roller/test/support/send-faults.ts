import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A faulty network in front of the API's send route, counting requests as they arrive: every
 * `refuseEvery`-th is answered 503 with `Retry-After: 1` and never forwarded (an overloaded
 * gateway); every `cutEvery`-th of the others is forwarded, and once the API has answered, the
 * client's connection is destroyed without a byte of the answer (a 202 the producer never got,
 * so it sends the same body again). Everything else passes through.
 */
export interface SendFaults {
  refuseEvery: number;
  cutEvery: number;
}

export interface SendFaultStats {
  requests: number;
  /** Answered 503 by the proxy. */
  refused: number;
  /** Forwarded, answered by the API, and cut. */
  cut: number;
  /** The API's answers to everything forwarded, cut or not, by status. */
  apiStatuses: Record<number, number>;
  /** The batch id the API answered for each cut send. */
  cutBatchIds: string[];
  /** The batch ids of replays (200, `Idempotent-Replayed: true`) the client received. */
  replayedBatchIds: string[];
  /** The proxy's own failures (answered 502): none in a sound run. */
  errors: string[];
}

export interface SendFaultProxy {
  url: string;
  stats: SendFaultStats;
  close(): Promise<void>;
}

async function body(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Headers passed on either way; the rest (host, length, connection) are each hop's own. */
const PASSED = ['authorization', 'content-type', 'content-encoding', 'idempotency-key', 'retry-after', 'idempotent-replayed'];

function passed(headers: Headers | IncomingMessage['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of PASSED) {
    const value = headers instanceof Headers ? headers.get(name) : headers[name];
    if (typeof value === 'string') out[name] = value;
  }
  return out;
}

export async function startSendFaults(apiUrl: string, faults: SendFaults): Promise<SendFaultProxy> {
  const stats: SendFaultStats = { requests: 0, refused: 0, cut: 0, apiStatuses: {}, cutBatchIds: [], replayedBatchIds: [], errors: [] };
  const server = createServer((request, response) => {
    const n = ++stats.requests;
    void (async () => {
      // Read whole before any answer, so that the client is never answered mid-upload.
      const payload = await body(request);
      if (n % faults.refuseEvery === 0) {
        stats.refused += 1;
        response.writeHead(503, { 'content-type': 'application/json', 'retry-after': '1' }).end('{"error":{"code":"proxy_unavailable"}}');
        return;
      }
      const upstream = await fetch(`${apiUrl}${request.url}`, { method: request.method ?? 'POST', headers: passed(request.headers), body: payload });
      const text = await upstream.text();
      stats.apiStatuses[upstream.status] = (stats.apiStatuses[upstream.status] ?? 0) + 1;
      const batchId = upstream.headers.get('content-type')?.startsWith('application/json') ? (JSON.parse(text) as { batch_id?: string }).batch_id : undefined;
      if (n % faults.cutEvery === 0) {
        stats.cut += 1;
        stats.cutBatchIds.push(batchId ?? `(none: ${upstream.status})`);
        request.socket.destroy();
        return;
      }
      if (upstream.status === 200 && upstream.headers.get('idempotent-replayed') === 'true' && batchId !== undefined) stats.replayedBatchIds.push(batchId);
      response.writeHead(upstream.status, passed(upstream.headers)).end(text);
    })().catch((error: unknown) => {
      stats.errors.push(String(error));
      if (!response.headersSent) response.writeHead(502, { 'content-type': 'text/plain' });
      response.end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    stats,
    close: () =>
      new Promise((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
