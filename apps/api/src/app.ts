import { STALE_CLAIM_SECONDS } from './domain/intake/claim.ts';
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyBaseLogger, type FastifyContextConfig, type FastifyInstance, type FastifyRequest } from 'fastify';
import type { AppDeps, InternalAppDeps, RouteDeps } from './deps.ts';
import { CatalogConnections } from './domain/catalogs.ts';
import { DEFAULT_BACKLOG_LIMITS } from './domain/intake/backlog.ts';
import { DEFAULT_IN_FLIGHT_LIMITS } from './domain/intake/in-flight.ts';
import { DEFAULT_STORE_TIMEOUT_MS } from './domain/intake/stores.ts';
import { apiError, registerErrorHandling, sendError } from './errors.ts';
import { clientErrorHandler } from './http/client-errors.ts';
import type { InternalTls } from './http/internal-tls.ts';
import { MAX_JSON_NESTING, nestingPastLimit } from './http/json-nesting.ts';
import { ApiMetrics, metricsRoutes } from './http/metrics.ts';
import { DEFAULT_SERVER_TIMEOUTS, timeoutOptions, type ServerTimeouts } from './http/server-limits.ts';
import { refuseUnstorableText } from './http/text-guard.ts';
import { connectionRoutes } from './routes/connection/index.ts';
import { docRoutes } from './routes/docs/index.ts';
import { healthRoutes } from './routes/health/index.ts';
import { internalRoutes } from './routes/internal/index.ts';
import { keyRoutes } from './routes/keys/index.ts';
import { sinkRoutes } from './routes/sinks/index.ts';
import { tableRoutes } from './routes/tables/index.ts';
import { usageRoutes } from './routes/usage/index.ts';
import { warehouseRoutes } from './routes/warehouses/index.ts';
import { LegacyDigests } from './domain/intake/body-digest.ts';

export type { AppDeps, InternalAppDeps } from './deps.ts';

const ONE_MIB = 1024 * 1024;
/**
 * The roller's requests: a roll intent or report names up to ROLL_MAX_BATCH_IDS batches
 * (~9 MiB of report with the longest ids).
 */
const INTERNAL_BODY_LIMIT = 16 * ONE_MIB;

/** A caller's X-Request-Id is kept when it is plain enough to be safe in a log line. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * false: no "incoming request" / "request completed" line for this route's requests.
     * For the send route, whose every request the metrics count: one line per batch would
     * be most of the log. Its refusals and failures are still logged (errors.ts).
     */
    accessLog?: boolean;
  }
}

/** Fastify's per-request lines, with the request id under our label, except for routes with accessLog: false. */
const logController = () =>
  new Fastify.LogController({
    requestIdLogLabel: 'request_id',
    disableRequestLogging: (req: object) => (req as Partial<FastifyRequest>).routeOptions?.config.accessLog === false,
  });

export interface RouteEntry {
  method: string;
  /** The URL pattern, e.g. `/v1/sinks/:sink`. */
  url: string;
  /** The route's config as its scopes left it (auth, openapi), read when asked: scope hooks set it after this list's. */
  config(): FastifyContextConfig;
}

const ROUTES = new WeakMap<FastifyInstance, RouteEntry[]>();

/** Every route of an app built here, as registered: checks that must cover each route (the fuzz test) read it. */
export function routesOf(app: FastifyInstance): readonly RouteEntry[] {
  return ROUTES.get(app) ?? [];
}

/**
 * What both listeners share: request ids, the one error handler, JSON bodies only, the timeouts, the route list.
 * With `tls` the listener serves HTTPS only (a plain HTTP request to it gets no answer).
 */
function baseApp(logger: FastifyBaseLogger, bodyLimit: number, timeouts: ServerTimeouts, tls?: InternalTls): FastifyInstance {
  // An HTTPS Fastify is typed apart (its server is an https.Server); the routes, listen() and
  // inject() are the same, so it is handled as the HTTP one.
  const app = Fastify({
    ...timeoutOptions(timeouts),
    ...(tls ? { https: { cert: tls.cert, key: tls.key } } : {}),
    loggerInstance: logger,
    logController: logController(),
    requestIdHeader: false,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    bodyLimit,
    return503OnClosing: true,
    // Errors raised while routing (a malformed percent-escape) bypass the error handler.
    frameworkErrors: sendError,
    clientErrorHandler,
  });

  const routes: RouteEntry[] = [];
  ROUTES.set(app, routes);
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) routes.push({ method, url: route.url, config: () => route.config ?? {} });
  });

  app.decorateRequest('principal', null);
  app.addHook('onRequest', async (request, reply) => {
    void reply.header('x-request-id', request.id);
  });
  registerErrorHandling(app);
  refuseUnstorableText(app);

  // JSON only. An empty body parses as "no body", so a DELETE sent with a JSON content type
  // is not refused, and a POST without one fails validation with a clear message. Nesting is
  // bounded before the parse, so nothing after it walks a body deeper than the limit.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit }, (request, body, done) => {
    if (body === '') {
      done(null, undefined);
      return;
    }
    const offset = nestingPastLimit(body as string, MAX_JSON_NESTING);
    if (offset !== undefined) {
      done(
        apiError('invalid_json', {
          message: `The body nests objects and arrays deeper than ${MAX_JSON_NESTING} levels (at character ${offset}); send a flatter body.`,
          details: { offset, max_nesting: MAX_JSON_NESTING },
        }),
        undefined,
      );
      return;
    }
    parseJson(request, body as string, done);
  });
  return app;
}

const PUBLIC_DESCRIPTION = [
  'One HTTP intake for every Apache Iceberg table. Producers POST JSON arrays to a sink with its send-only key (see sendBatch); owners manage API keys, warehouses (Iceberg REST catalog registrations), tables and sinks with API keys of three levels, read < write < admin.',
  'Every route answers `X-Request-Id` (the caller\'s own when it is 1-64 of `A-Z a-z 0-9 . _ : -`), and every GET also answers HEAD. Every error is `{"error": {"code", "message", ...details, "request_id"}}`: branch on `code`; codes may be added. A path no route has is 404 `not_found`; `client_aborted` (499) is only logged, never sent. The internal API of the roller is not part of this document: it listens apart, never on public networks, behind the bootstrap secret, and describes itself at `/internal/openapi.json` there.',
].join('\n\n');

/** The producer's route first, then the owner's resources, then the probes and this reference. */
const PUBLIC_TAGS = ['send', 'sinks', 'tables', 'warehouses', 'connection', 'usage', 'keys', 'status', 'probes', 'reference'];

const INTERNAL_DESCRIPTION =
  'The roller\'s API, on the internal listener only: it answers with tenant credentials in clear. Every request, unknown paths included, needs `Authorization: Bearer <TABLEMERE_BOOTSTRAP_SECRET>`, else 401 `unauthorized`. Times are the database\'s clock.';

/**
 * The API as a Fastify instance, wired to `deps`. It reads no environment and does not
 * listen: start.ts does that, tests use `inject()`.
 */
export function buildApp(deps: AppDeps): FastifyInstance {
  const app = baseApp(deps.logger, deps.bodyLimit ?? ONE_MIB, deps.timeouts ?? DEFAULT_SERVER_TIMEOUTS);
  const routeDeps: RouteDeps = {
    pool: deps.pool,
    secrets: deps.secrets,
    s3: deps.s3,
    intakeBucket: deps.intakeBucket,
    publicUrl: deps.publicUrl.replace(/\/+$/, ''),
    catalogs: deps.catalogs ?? new CatalogConnections(deps.catalogTimeoutMs),
    readinessTimeoutMs: deps.readinessTimeoutMs ?? 2_000,
    metrics: deps.metrics ?? new ApiMetrics(),
    sinksEnabled: deps.sinksEnabled ?? true,
    sinkBacklog: deps.sinkBacklog ?? DEFAULT_BACKLOG_LIMITS,
    sendInFlight: deps.sendInFlight ?? DEFAULT_IN_FLIGHT_LIMITS,
    legacyDigests: deps.legacyDigests ?? new LegacyDigests(deps.pool),
    staleClaimSeconds: deps.staleClaimSeconds ?? STALE_CLAIM_SECONDS,
    storeTimeoutMs: deps.storeTimeoutMs ?? DEFAULT_STORE_TIMEOUT_MS,
    intakeCrashAt: deps.intakeCrashAt ?? null,
  };
  metricsRoutes(app, routeDeps.metrics, deps.metricsToken);
  routeDeps.metrics.backlogLimits(routeDeps.sinkBacklog);
  healthRoutes(app, routeDeps);
  keyRoutes(app, routeDeps);
  warehouseRoutes(app, routeDeps);
  tableRoutes(app, routeDeps);
  connectionRoutes(app, routeDeps);
  usageRoutes(app, routeDeps);
  sinkRoutes(app, routeDeps);
  docRoutes(app, () => routesOf(app), { title: 'tablemere sinks API', description: PUBLIC_DESCRIPTION, serverUrl: routeDeps.publicUrl, tags: PUBLIC_TAGS, html: true });
  return app;
}

/**
 * The roller's API (/internal/*) as its own Fastify instance, for the second listener only:
 * it answers with tenant credentials in clear, so the public app never registers it.
 */
export function buildInternalApp(deps: InternalAppDeps): FastifyInstance {
  const app = baseApp(deps.logger, INTERNAL_BODY_LIMIT, deps.timeouts ?? DEFAULT_SERVER_TIMEOUTS, deps.tls);
  internalRoutes(app, deps.bootstrapSecret, {
    pool: deps.pool,
    secrets: deps.secrets,
    intakeBucket: deps.intakeBucket,
    sinksEnabled: deps.sinksEnabled ?? true,
  });
  docRoutes(app, () => routesOf(app), { title: 'tablemere sinks internal API (the roller\'s)', description: INTERNAL_DESCRIPTION, prefix: '/internal', html: false });
  return app;
}
