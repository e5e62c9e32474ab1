import type { FastifyInstance } from 'fastify';
import type { RouteEntry } from '../../app.ts';
import { buildDocument, type DocumentInfo, type OpenApiDocument } from '../../openapi/document.ts';
import { renderReference } from '../../openapi/html.ts';
import type { RouteDoc } from '../../openapi/route-doc.ts';

const DOCUMENT_DOC: RouteDoc = {
  id: 'openapi', tag: 'reference', summary: 'This OpenAPI 3.1 document',
  description: 'Built from the routes as registered, the contracts they parse with and the error registry.',
  answers: { 200: { description: 'The OpenAPI document', text: 'application/json' } },
  errors: [],
};

/**
 * `GET <prefix>/openapi.json`, and with `html` also `GET <prefix>/docs`: the document of
 * every route of `app` (`routes` lists them), built once the app is ready, so a route
 * without its declaration stops the start.
 */
export function docRoutes(app: FastifyInstance, routes: () => readonly RouteEntry[], options: DocumentInfo & { prefix?: string; html: boolean }): void {
  const documentPath = `${options.prefix ?? ''}/openapi.json`;
  let document: OpenApiDocument | undefined;
  let page: string | undefined;
  app.addHook('onReady', async () => {
    document = buildDocument(routes(), options);
    if (options.html) page = renderReference(document, documentPath);
  });
  app.get(documentPath, { config: { openapi: DOCUMENT_DOC } }, async () => document);
  if (!options.html) return;
  app.get(
    `${options.prefix ?? ''}/docs`,
    {
      config: {
        openapi: {
          id: 'docs', tag: 'reference', summary: 'This reference as an HTML page',
          description: 'One self-contained page (no script, no outside asset) rendered from the OpenAPI document.',
          answers: { 200: { description: 'The HTML reference', text: 'text/html' } },
          errors: [],
        },
      },
    },
    async (_request, reply) => reply.type('text/html; charset=utf-8').send(page),
  );
}
