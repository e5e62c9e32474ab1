import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A faulty network in front of the real catalog: every request is forwarded, except that the
 * first `dropAnswers` table commits are answered 502, either after the catalog processed them
 * (`forward: true`, a gateway that lost the answer) or without reaching it (`forward: false`).
 */
export interface FaultOptions {
  dropAnswers: number;
  forward: boolean;
}

export interface FaultyProxy {
  uri: string;
  /** Commits forwarded to the catalog, and how many of their answers were replaced by 502. */
  stats: { commitsForwarded: number; answersDropped: number };
  /** Runs `hook` once, before the next table commit goes on: another writer's commit there makes it lose the race. */
  beforeNextCommit(hook: () => Promise<void>): void;
  close(): Promise<void>;
}

/** A table commit, below any base path and prefix (Nessie serves `/iceberg/v1/{prefix}/...`). */
const COMMIT_PATH = /\/v1\/(?:[^/]+\/)?namespaces\/[^/]+\/tables\/[^/]+$/;

async function body(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export async function startFaultyProxy(target: string, faults: FaultOptions): Promise<FaultyProxy> {
  const stats = { commitsForwarded: 0, answersDropped: 0 };
  let beforeNextCommit: (() => Promise<void>) | undefined;
  const server: Server = createServer((request, response) => {
    void (async () => {
      const payload = await body(request);
      const headers: Record<string, string> = {};
      for (const [key, value] of Object.entries(request.headers)) {
        if (typeof value === 'string' && key !== 'host' && key !== 'content-length' && key !== 'connection') headers[key] = value;
      }
      const isCommit = request.method === 'POST' && COMMIT_PATH.test(new URL(request.url ?? '/', 'http://proxy').pathname);
      if (isCommit && beforeNextCommit) {
        const hook = beforeNextCommit;
        beforeNextCommit = undefined;
        await hook();
      }
      const drop = isCommit && stats.answersDropped < faults.dropAnswers;
      if (drop && !faults.forward) {
        stats.answersDropped += 1;
        response.writeHead(502, { 'content-type': 'text/plain' }).end('bad gateway');
        return;
      }
      const upstream = await fetch(`${target}${request.url}`, {
        method: request.method ?? 'GET',
        headers,
        ...(payload.length > 0 ? { body: payload } : {}),
      });
      const answer = Buffer.from(await upstream.arrayBuffer());
      if (isCommit) stats.commitsForwarded += 1;
      if (drop) {
        stats.answersDropped += 1;
        response.writeHead(502, { 'content-type': 'text/plain' }).end('bad gateway');
        return;
      }
      response.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' }).end(answer);
    })().catch((error: unknown) => {
      response.writeHead(500).end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    uri: `http://127.0.0.1:${port}`,
    stats,
    beforeNextCommit: (hook) => {
      beforeNextCommit = hook;
    },
    close: () => new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve()))),
  };
}
