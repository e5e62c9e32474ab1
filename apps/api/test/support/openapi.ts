import type { FastifyInstance } from 'fastify';
import { openApiPath, type OpenApiDocument } from '../../src/openapi/document.ts';

export interface ServedDocuments {
  public: OpenApiDocument;
  internal: OpenApiDocument;
  /**
   * Whether the document of the route (`POST /v1/sinks/:sink`) names this answer: its status,
   * and for an error its code. A HEAD answer is its GET's, judged by status alone; 404 not_found is the answer of a
   * path no route matched (a bad segment can make one), which no route's entry names.
   */
  answers(route: string, status: number, code: string | undefined): boolean;
}

/** The OpenAPI documents the two apps serve. */
export async function servedDocuments(app: FastifyInstance, internal: FastifyInstance, secret: string): Promise<ServedDocuments> {
  const fetchDoc = async (target: FastifyInstance, url: string, headers: Record<string, string> = {}) => {
    const response = await target.inject({ method: 'GET', url, headers });
    if (response.statusCode !== 200) throw new Error(`GET ${url}: ${response.statusCode} ${response.body.slice(0, 300)}`);
    return response.json<OpenApiDocument>();
  };
  const docs = { public: await fetchDoc(app, '/openapi.json'), internal: await fetchDoc(internal, '/internal/openapi.json', { authorization: `Bearer ${secret}` }) };
  return {
    ...docs,
    answers(route, status, code) {
      if (status === 404 && code === 'not_found') return true;
      const [given, url] = route.split(' ') as [string, string];
      const method = given === 'HEAD' ? 'get' : given.toLowerCase();
      const doc = url.startsWith('/internal/') ? docs.internal : docs.public;
      const response = doc.paths[openApiPath(url)]?.[method]?.responses[String(status)];
      if (!response) return false;
      const json = (response.content as Record<string, { schema?: { $ref?: string }; examples?: Record<string, unknown> }> | undefined)?.['application/json'];
      // An answer of the route's own contract (e.g. /readyz's 503), or a HEAD answer, which has no body to name its code.
      if (json?.schema?.$ref !== '#/components/schemas/Error' || given === 'HEAD') return true;
      return code !== undefined && code in (json.examples ?? {});
    },
  };
}
