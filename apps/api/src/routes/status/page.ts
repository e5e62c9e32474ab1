import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';

const FILES = new URL('../../status-page/', import.meta.url);

/**
 * The page runs only its own script and style, talks only to this origin, cannot be framed and
 * sends no Referer: the admin key it holds in sessionStorage is reachable by no other code.
 */
const PAGE_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-cache',
};

/** GET /status and its script and style: static files, public, holding no data and no key. */
export function statusPage(app: FastifyInstance): void {
  const files = [
    { url: '/status', file: 'index.html', type: 'text/html; charset=utf-8' },
    { url: '/status/status.js', file: 'status.js', type: 'text/javascript; charset=utf-8' },
    { url: '/status/status.css', file: 'status.css', type: 'text/css; charset=utf-8' },
  ];
  for (const { url, file, type } of files) {
    const body = readFileSync(new URL(file, FILES));
    app.get(url, async (_request, reply) => reply.headers(PAGE_HEADERS).type(type).send(body));
  }
}
