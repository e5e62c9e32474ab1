import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import type { RouteDoc } from '../../openapi/route-doc.ts';

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
    { url: '/status', id: 'statusPage', file: 'index.html', type: 'text/html', summary: "The operator's status page (asks for an admin key, then reads GET /v1/status)" },
    { url: '/status/status.js', id: 'statusPageScript', file: 'status.js', type: 'text/javascript', summary: "The status page's script" },
    { url: '/status/status.css', id: 'statusPageStyle', file: 'status.css', type: 'text/css', summary: "The status page's style" },
  ];
  for (const { url, id, file, type, summary } of files) {
    const body = readFileSync(new URL(file, FILES));
    const openapi: RouteDoc = { id, tag: 'status', summary, answers: { 200: { description: 'A static file, holding no data', text: type } }, errors: [] };
    app.get(url, { config: { openapi } }, async (_request, reply) => reply.headers(PAGE_HEADERS).type(`${type}; charset=utf-8`).send(body));
  }
}
