import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { freePort } from '../../../tests/support/ports.ts';
import { alertRules, dashboardQueries, opsFiles, prometheusBin } from '../../../tests/support/ops.ts';
import type { CreatedSink } from '@tablemere/contracts';
import { createSink, createTable, send } from './support/api.ts';
import { addressOf, runCli, startRoller, waitFor, type RunningRoller } from './support/roller.ts';
import { startTestStack, suffix, type TestStack } from './support/stack.ts';

/**
 * The alert rules and the dashboard on a real Prometheus (Debian's, unpacked by the install)
 * scraping a real API and roller: a sink whose table was dropped stalls and fills its backlog,
 * a send refused 503 while another holds the sink's in-flight cap, and the alerts say so; every
 * rule evaluates without error and every dashboard query answers.
 */
let stack: TestStack;
let roller: RunningRoller | undefined;
let prometheus: ChildProcess | undefined;
const dir = mkdtempSync(path.join(tmpdir(), 'tablemere-prometheus-'));
const ns = `alerts_${suffix()}`;

beforeAll(async () => {
  // A backlog cap of 2 batches, so one stalled sink reaches it with two sends; one send in flight per sink (each weighs at least 64 KiB).
  stack = await startTestStack({
    limits: { sinkBacklog: { maxPendingBatches: 2, maxPendingBytes: 1024 * 1024 * 1024 }, sendInFlight: { processBytes: 1024 * 1024 * 1024, sinkBytes: 64 * 1024 } },
  });
});

afterAll(async () => {
  prometheus?.kill('SIGTERM');
  roller?.child.kill('SIGTERM');
  await roller?.finished;
  rmSync(dir, { recursive: true, force: true });
  await stack?.dropNamespaces([ns]);
  await stack?.stop();
});

interface Alert {
  labels: Record<string, string>;
  state: 'pending' | 'firing';
}

/** Starts Prometheus on the rules in ops/, scraping the test API and roller every second, and evaluating every second. */
async function startPrometheus(targets: { api: string; roller: string }): Promise<string> {
  const bin = prometheusBin('prometheus');
  if (!existsSync(bin)) throw new Error(`${bin} is missing: run \`node scripts/ensure-install.mjs --tests\``);
  const host = (url: string) => new URL(url).host;
  const config = path.join(dir, 'prometheus.yml');
  writeFileSync(
    config,
    stringify({
      global: { scrape_interval: '1s', evaluation_interval: '1s' },
      rule_files: [opsFiles.rules],
      scrape_configs: [
        { job_name: 'tablemere-api', static_configs: [{ targets: [host(targets.api)] }] },
        { job_name: 'tablemere-roller', static_configs: [{ targets: [host(targets.roller)] }] },
      ],
    }),
  );
  const url = `http://127.0.0.1:${await freePort()}`;
  let output = '';
  prometheus = spawn(bin, [`--config.file=${config}`, `--storage.tsdb.path=${path.join(dir, 'data')}`, `--web.listen-address=${host(url)}`, '--log.level=warn'], { stdio: ['ignore', 'pipe', 'pipe'] });
  prometheus.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  prometheus.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await waitFor(`Prometheus to be ready (${output})`, async () => (await fetch(`${url}/-/ready`).catch(() => null))?.status === 200, 30_000);
  return url;
}

/**
 * One send answered 503 intake_busy: it arrives while another send to the same sink, whose body
 * is only half written, holds the sink's in-flight cap; then that one finishes (202). Both go
 * through the send key's lookup first, so on a loaded machine the second can enter before the
 * first: then the first is the one refused, and the pair is tried again under new batch ids.
 */
async function refusedWhileBusy(sink: CreatedSink, batchId: string): Promise<void> {
  const body = JSON.stringify([{ x: 1 }]);
  const post = (id: string) =>
    fetch(`${stack.apiUrl}/v1/sinks/${sink.id}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sink.send_key}`, 'idempotency-key': id, 'content-type': 'application/json' },
      body,
    }).then(async (res) => (await res.text(), res.status));
  for (let attempt = 1; attempt <= 5; attempt++) {
    const slow = request(`${stack.apiUrl}/v1/sinks/${sink.id}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sink.send_key}`, 'idempotency-key': `${batchId}-${attempt}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    });
    const answered = new Promise<number>((resolve, reject) => {
      slow.on('response', (res) => {
        res.resume();
        resolve(res.statusCode!);
      });
      slow.on('error', reject);
    });
    slow.write(body.slice(0, 3));
    await new Promise((r) => setTimeout(r, 500 * attempt));
    const busy = await post(`${batchId}-${attempt}-busy`);
    slow.end(body.slice(3));
    const first = await answered;
    if (busy === 503) {
      expect(first).toBe(202);
      return;
    }
    // The two did not overlap in that order: the second went through, the first either too or refused.
    expect(busy).toBe(202);
    expect([202, 503]).toContain(first);
  }
  throw new Error('no send was refused 503 while another held the sink in-flight cap, in 5 tries');
}

async function api<T>(prometheusUrl: string, pathAndQuery: string): Promise<T> {
  const body = (await (await fetch(`${prometheusUrl}${pathAndQuery}`)).json()) as { status: string; data: T; error?: string };
  expect(body.status, `${pathAndQuery}: ${body.error}`).toBe('success');
  return body.data;
}

/** An instant query's series. */
async function query<T = { metric: Record<string, string> }>(prometheusUrl: string, expr: string): Promise<T[]> {
  return (await api<{ result: T[] }>(prometheusUrl, `/api/v1/query?query=${encodeURIComponent(expr)}`)).result;
}

describe('the alert rules and the dashboard on Prometheus, against a real API and roller', () => {
  it('fire for a stalled sink at its backlog cap and for refused sends, evaluate without errors, and answer every dashboard query', async () => {
    await createTable(stack, ns, 'kept', [{ name: 'x', type: 'long', required: true }]);
    await createTable(stack, ns, 'gone', [{ name: 'x', type: 'long', required: true }]);
    await createTable(stack, ns, 'busy', [{ name: 'x', type: 'long', required: true }]);
    const kept = await createSink(stack, `kept_${suffix()}`, `${ns}.kept`);
    await send(stack, kept, 'k1', [{ x: 1 }]);
    const gone = await createSink(stack, `gone_${suffix()}`, `${ns}.gone`);
    await send(stack, gone, 'g1', [{ x: 1 }]);
    await send(stack, gone, 'g2', [{ x: 2 }]);
    await stack.catalog.dropTable({ namespace: ns, name: 'gone' }, { purge: true });
    // The first failed roll marks the sink table_missing; from then on the service's survey retries it.
    expect((await runCli(['roll', gone.id], stack.rollerEnv())).code).toBe(1);

    roller = startRoller(stack.rollerEnv({ TABLEMERE_ROLLER_TICK_SECONDS: '1', TABLEMERE_ROLLER_SURVEY_SECONDS: '1' }));
    const url = await startPrometheus({ api: stack.apiUrl, roller: await addressOf(roller) });
    // The 503 comes once Prometheus has seen its counter at 0, or no rate would show it.
    await waitFor('the first scrape of the API', async () => (await query(url, 'tablemere_intake_requests_total{status="503"}')).length > 0);
    const busy = await createSink(stack, `busy_${suffix()}`, `${ns}.busy`);
    await refusedWhileBusy(busy, 'b1');

    let alerts: Alert[] = [];
    const active = (name: string, labels: Record<string, string>) => alerts.some((a) => a.labels.alertname === name && Object.entries(labels).every(([k, v]) => a.labels[k] === v));
    await waitFor(
      'the stalled sink alerts',
      async () => {
        alerts = (await api<{ alerts: Alert[] }>(url, '/api/v1/alerts')).alerts;
        return (
          active('TablemereSinkStalled', { sink: gone.id }) &&
          active('TablemereBacklogNearCap', { sink: gone.id }) &&
          active('TablemereRollsFailing', { reason: 'table_missing' }) &&
          active('TablemereIntake5xx', {})
        );
      },
      90_000,
    );
    // Nothing about the sink that rolls, and the roller ticks.
    expect(alerts.filter((a) => a.labels.sink === kept.id)).toEqual([]);
    expect(active('TablemereRollerNotTicking', {})).toBe(false);

    const groups = (await api<{ groups: Array<{ rules: Array<{ name: string; health: string; lastError?: string }> }> }>(url, '/api/v1/rules')).groups;
    const evaluated = groups.flatMap((g) => g.rules).map((r) => ({ name: r.name, health: r.health, error: r.lastError ?? '' }));
    expect(evaluated).toEqual(alertRules().map((r) => ({ name: r.alert, health: 'ok', error: '' })));

    for (const { expr } of dashboardQueries()) await query(url, expr);
    // The lag panel's series join each sink's lag with its own policy.
    await waitFor('the survey to see the busy sink', async () => (await query(url, `tablemere_roller_lag_seconds{sink="${busy.id}"}`)).length > 0);
    const lag = await query(url, 'max by (sink) (tablemere_roller_lag_seconds) - on (sink) max by (sink) (tablemere_roller_policy_roll_seconds)');
    expect(lag.map((r) => r.metric.sink).sort()).toEqual([gone.id, kept.id, busy.id].sort());
  }, 180_000);
});
