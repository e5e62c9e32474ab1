import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiMetrics } from '../src/http/metrics.ts';
import { call, dropNamespace, suffix } from './support/harness.ts';
import { startInternalTestApi, type InternalTestApi } from './support/internal-harness.ts';
import { createSink, createTable, send } from './support/sinks.ts';

let api: InternalTestApi;
const ns = `api_metrics_${suffix()}`;

beforeAll(async () => {
  api = await startInternalTestApi();
});
afterAll(async () => {
  await dropNamespace(api.env, ns);
  await api?.close();
});

/** The value of one sample line of the Prometheus text, or undefined when absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('GET /metrics', () => {
  it('serves the intake series and the process metrics as Prometheus text, without a key', async () => {
    const res = await call(api.app, 'GET', '/metrics');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    for (const name of [
      'tablemere_intake_requests_total',
      'tablemere_intake_request_duration_seconds',
      'tablemere_intake_batches_total',
      'tablemere_intake_bytes_total',
      'tablemere_intake_rows_total',
      'tablemere_intake_backlog_max_bytes',
      'tablemere_intake_backlog_max_batches',
      'process_cpu_user_seconds_total',
      'nodejs_heap_size_used_bytes',
    ]) {
      expect(res.text).toContain(`# TYPE ${name} `);
    }
    expect(sample(res.text, 'tablemere_intake_batches_total')).toBe(0);
    // The harness builds the app with the default caps.
    expect(sample(res.text, 'tablemere_intake_backlog_max_bytes')).toBe(1024 * 1024 * 1024);
    expect(sample(res.text, 'tablemere_intake_backlog_max_batches')).toBe(10_000);
  });

  it('counts accepted batches, bytes and rows, and times answers of the send route only', async () => {
    const metrics = new ApiMetrics();
    const { app } = api.variant({ sinksEnabled: true, metrics });
    metrics.intakeAccepted({ bytes: 2048, rows: 10, rejected: 2 });
    metrics.intakeAccepted({ bytes: 100, rows: 1, rejected: 0 });
    // Other routes are not timed as intake.
    await call(app, 'GET', '/healthz');
    await call(app, 'GET', '/v1/usage', { key: api.adminKey });
    const text = (await call(app, 'GET', '/metrics')).text;
    expect(sample(text, 'tablemere_intake_batches_total')).toBe(2);
    expect(sample(text, 'tablemere_intake_bytes_total')).toBe(2148);
    expect(sample(text, 'tablemere_intake_rows_total{outcome="accepted"}')).toBe(11);
    expect(sample(text, 'tablemere_intake_rows_total{outcome="rejected"}')).toBe(2);
    // Every status the route answers is there from the start, at 0 (so a rate sees the first one).
    expect(sample(text, 'tablemere_intake_requests_total{status="202"}')).toBe(0);
    expect(sample(text, 'tablemere_intake_requests_total{status="503"}')).toBe(0);
    const requests = [...text.matchAll(/^tablemere_intake_requests_total\{.*\} (\S+)$/gm)].map((m) => m[1]);
    expect(requests.length).toBeGreaterThan(5);
    expect(requests.every((n) => n === '0')).toBe(true);
  });

  it('after real sends: requests by status, latency, batches, bytes and rows', async () => {
    const metrics = new ApiMetrics();
    const { app } = api.variant({ sinksEnabled: true, metrics });
    await createTable(api, ns, 'events');
    const sink = await createSink(app, api.adminKey, { name: 'metered', table: `${ns}.events` });
    const body = '[{"x": 1, "who": "north"}, {"x": 2}, 7]';
    const accepted = await send(app, sink, body, { batchId: 'm-1' });
    expect(accepted.status, accepted.text).toBe(202);
    // A replay answers the first result and is not counted as a new batch; a refused send is counted by status.
    expect((await send(app, sink, body, { batchId: 'm-1' })).status).toBeLessThan(300);
    expect((await send(app, sink, body, { batchId: 'm-2', key: api.adminKey })).status).toBe(403);

    const text = (await call(app, 'GET', '/metrics')).text;
    expect(sample(text, 'tablemere_intake_batches_total')).toBe(1);
    expect(sample(text, 'tablemere_intake_bytes_total')).toBe(accepted.body.bytes);
    expect(sample(text, 'tablemere_intake_rows_total{outcome="accepted"}')).toBe(2);
    expect(sample(text, 'tablemere_intake_rows_total{outcome="rejected"}')).toBe(1);
    expect(sample(text, 'tablemere_intake_requests_total{status="202"}')).toBe(1);
    expect(sample(text, 'tablemere_intake_requests_total{status="403"}')).toBe(1);
    const answered = [...text.matchAll(/^tablemere_intake_request_duration_seconds_count\{status="(\d+)"\} (\d+)$/gm)].reduce((n, m) => n + Number(m[2]), 0);
    expect(answered).toBe(3);
    // Counts only: no key, sink id or batch id in the text.
    for (const secret of [sink.send_key, sink.id, 'm-1', api.adminKey]) expect(text).not.toContain(secret);
    expect((await call(app, 'DELETE', `/v1/sinks/${sink.id}`, { key: api.adminKey })).status).toBe(202);
  });
});
