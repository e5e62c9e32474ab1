import { carriesBearer } from '@tablemere/contracts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { BacklogLimits } from '../domain/intake/backlog.ts';
import { apiError, ERROR_CODES } from '../errors.ts';

/** A batch the send route accepted (not a replay of an earlier one). */
export interface IntakeBatch {
  bytes: number;
  /** Objects stored for the roller. */
  rows: number;
  /** Other elements, stored too: the roll rejects them as not_an_object. */
  rejected: number;
}

/** Latency buckets for the send route: a small batch is milliseconds, 16 MiB a few seconds. */
const INTAKE_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * The API's Prometheus metrics on their own registry (never the global one, so two apps in
 * one process do not share counters): the intake's requests, bytes, rows and latency, the
 * backlog caps (so alert rules can compare the roller's per-sink backlog to them), and the
 * default process metrics.
 */
export class ApiMetrics {
  private readonly requests: Counter<'status'>;
  private readonly latency: Histogram<'status'>;
  private readonly batches: Counter;
  private readonly bytes: Counter;
  private readonly rows: Counter<'outcome'>;
  private readonly segments: Counter;
  private readonly segmentBatches: Histogram;
  private readonly segmentBytes: Counter;
  private readonly backlogMaxBytes: Gauge;
  private readonly backlogMaxBatches: Gauge;

  constructor(readonly registry: Registry = new Registry()) {
    const registers = [registry];
    collectDefaultMetrics({ register: registry });
    this.requests = new Counter({
      name: 'tablemere_intake_requests_total',
      help: 'Requests to the send route (POST /v1/sinks/{sink_id}) by HTTP status.',
      labelNames: ['status'],
      registers,
    });
    // Every status the route can answer starts at 0, so a rate sees the first 5xx of a process too.
    for (const status of new Set([202, ...Object.values(ERROR_CODES).map((e) => e.status)])) this.requests.inc({ status: String(status) }, 0);
    this.latency = new Histogram({
      name: 'tablemere_intake_request_duration_seconds',
      help: 'Time to answer the send route, by HTTP status.',
      labelNames: ['status'],
      buckets: INTAKE_BUCKETS,
      registers,
    });
    this.batches = new Counter({ name: 'tablemere_intake_batches_total', help: 'Batches accepted at the intake (202, replays excluded).', registers });
    this.bytes = new Counter({ name: 'tablemere_intake_bytes_total', help: 'Bytes of accepted batches, as stored.', registers });
    this.segments = new Counter({ name: 'tablemere_intake_segments_total', help: 'Intake objects (segments) written, each holding the batches of one sink sent together.', registers });
    this.segmentBatches = new Histogram({
      name: 'tablemere_intake_segment_batches',
      help: 'Batches per segment written.',
      buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1000],
      registers,
    });
    this.segmentBytes = new Counter({ name: 'tablemere_intake_segment_bytes_total', help: 'Bytes of the segments written, headers included.', registers });
    this.rows = new Counter({
      name: 'tablemere_intake_rows_total',
      help: 'Elements of accepted batches, all stored for the roller: objects (accepted) and others, which the roll rejects as not_an_object (rejected).',
      labelNames: ['outcome'],
      registers,
    });
    this.backlogMaxBytes = new Gauge({
      name: 'tablemere_intake_backlog_max_bytes',
      help: "A sink's backlog cap in bytes waiting for a roll: past it the send route answers 429 backlog_full (TABLEMERE_SINK_MAX_PENDING_BYTES).",
      registers,
    });
    this.backlogMaxBatches = new Gauge({
      name: 'tablemere_intake_backlog_max_batches',
      help: "A sink's backlog cap in batches waiting for a roll: past it the send route answers 429 backlog_full (TABLEMERE_SINK_MAX_PENDING_BATCHES).",
      registers,
    });
  }

  /** The caps the send route enforces, as this process was configured. */
  backlogLimits(limits: Readonly<BacklogLimits>): void {
    this.backlogMaxBytes.set(limits.maxPendingBytes);
    this.backlogMaxBatches.set(limits.maxPendingBatches);
  }

  /** The send route calls this once per newly accepted batch. */
  intakeAccepted(batch: IntakeBatch): void {
    this.batches.inc();
    this.bytes.inc(batch.bytes);
    this.rows.inc({ outcome: 'accepted' }, batch.rows);
    this.rows.inc({ outcome: 'rejected' }, batch.rejected);
  }

  /** A segment the intake wrote: how many batches it holds, and its bytes. */
  segmentWritten(batches: number, bytes: number): void {
    this.segments.inc();
    this.segmentBatches.observe(batches);
    this.segmentBytes.inc(bytes);
  }

  /** A send whose client left before its answer (client_aborted): counted under status 499, not timed. */
  intakeAborted(): void {
    this.requests.inc({ status: String(ERROR_CODES.client_aborted.status) });
  }

  /** One answered request on the send route. */
  intakeAnswered(status: number, seconds: number): void {
    const label = { status: String(status) };
    this.requests.inc(label);
    this.latency.observe(label, seconds);
  }
}

/** The send route: POST /v1/sinks/:<param>, whatever the parameter is named. */
const isSendRoute = (request: FastifyRequest) =>
  request.method === 'POST' && /^\/v1\/sinks\/:[A-Za-z_]+$/.test(request.routeOptions.url ?? '');


/**
 * Serves `GET /metrics` (Prometheus text: counts only, never a name or a secret) and times
 * every answer of the send route. Register on the public app only. With `token`
 * (TABLEMERE_METRICS_TOKEN), /metrics needs `Authorization: Bearer <token>`, 401 otherwise;
 * without it, /metrics is open.
 */
export function metricsRoutes(app: FastifyInstance, metrics: ApiMetrics, token?: string): void {
  app.addHook('onResponse', async (request, reply) => {
    if (isSendRoute(request)) metrics.intakeAnswered(reply.statusCode, reply.elapsedTime / 1000);
  });
  // A client that left before its answer gets none, so onResponse never runs: counted as 499 (client_aborted).
  app.addHook('onRequestAbort', async (request) => {
    if (isSendRoute(request)) metrics.intakeAborted();
  });
  app.get('/metrics', {
    config: {
      openapi: {
        id: 'metrics', tag: 'probes', summary: 'Prometheus metrics of the API process',
        description: 'The send route\'s counters and durations by status, batches, bytes and rows accepted, and the process metrics, in the Prometheus text format. No API key; when the API runs with TABLEMERE_METRICS_TOKEN, it needs `Authorization: Bearer <that token>` (401 `unauthorized` otherwise).',
        answers: { 200: { description: 'Prometheus text exposition', text: 'text/plain' } },
        errors: ['unauthorized'],
      },
    },
  }, async (request, reply) => {
    if (token !== undefined && !carriesBearer(request.headers.authorization, token)) {
      void reply.header('www-authenticate', 'Bearer realm="metrics"');
      throw apiError('unauthorized', { message: 'This /metrics needs "Authorization: Bearer <TABLEMERE_METRICS_TOKEN>".' });
    }
    void reply.header('content-type', metrics.registry.contentType);
    return metrics.registry.metrics();
  });
}
