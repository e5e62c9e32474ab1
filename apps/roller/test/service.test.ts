import { rejectsPrefix } from '@tablemere/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSink, createTable, getSink, send } from './support/api.ts';
import { readBoth } from './support/expect.ts';
import { addressOf, logLines, runCli, startRoller, waitFor, type RunningRoller } from './support/roller.ts';
import { startTestStack, suffix, type TestStack } from './support/stack.ts';

/** The roller as a service: its own policy, /healthz and /metrics, the survey, sweeps, stopping, idling. */
let stack: TestStack;
const namespaces: string[] = [];

beforeAll(async () => {
  stack = await startTestStack();
});

afterAll(async () => {
  await stack?.dropNamespaces(namespaces);
  await stack?.stop();
});

async function newTable(): Promise<string> {
  const ns = `svc_${suffix()}`;
  namespaces.push(ns);
  await createTable(stack, ns, 'events', [{ name: 'x', type: 'long', required: true }]);
  return ns;
}

async function stop(roller: RunningRoller) {
  roller.child.kill('SIGTERM');
  return roller.finished;
}

describe('the roller service', () => {
  it('rolls due sinks by their policy, serves /healthz and /metrics, and stops cleanly', async () => {
    const ns = await newTable();
    const sink = await createSink(stack, `svc_${suffix()}`, `${ns}.events`, { inactivity_seconds: 10 });
    await send(stack, sink, 'one', [{ x: 1 }, { x: 2 }, { nope: true }]);
    await send(stack, sink, 'two', [{ x: 3 }]);
    const roller = startRoller(stack.rollerEnv({ TABLEMERE_ROLLER_TICK_SECONDS: '1', TABLEMERE_ROLLER_SURVEY_SECONDS: '2' }));
    try {
      const address = await addressOf(roller);
      const started = logLines(roller.output()).find((l) => l.internal_api);
      expect(started).toMatchObject({ internal_api: stack.internalUrl, store: stack.env.AWS_ENDPOINT_URL, store_credentials: 'environment (AWS_ACCESS_KEY_ID)' });
      expect(roller.output()).not.toContain(stack.bootstrapSecret);
      expect(roller.output()).not.toContain(stack.env.AWS_SECRET_ACCESS_KEY!);

      // Not due before inactivity_seconds have passed since the last batch.
      const sentAt = Date.now();
      await waitFor('the roll', async () => (await getSink(stack, sink.id)).lag.batches_waiting === 0, 60_000);
      expect(Date.now() - sentAt).toBeGreaterThan(5_000);
      expect((await readBoth(stack, ns, 'events')).map((r) => r.x)).toEqual([1, 2, 3]);

      // The run ends a moment after the report settled the ledger: the sweep, then the API
      // asked whether the sink is still due, then the lease given back.
      // The answer that showed it is the one checked: the next tick may already have started
      // another job (the survey queues the sink's first upkeep), so a second look can be busy.
      const health = async () => {
        const answer = await fetch(`${address}/healthz`);
        expect(answer.status).toBe(200);
        return (await answer.json()) as { in_flight: number };
      };
      let ended: { in_flight: number } | undefined;
      await waitFor('the run to end', async () => (ended = await health()).in_flight === 0, 10_000);
      expect(ended).toMatchObject({ status: 'ok', in_flight: 0, last_tick_at: expect.any(String) });
      expect((await fetch(`${address}/readyz`)).status).toBe(200);
      // The survey (every 2 s) sets the lag gauge of every sink.
      await new Promise((r) => setTimeout(r, 2500));
      const metrics = await (await fetch(`${address}/metrics`)).text();
      expect(metrics).toContain('tablemere_roller_rolls_total{outcome="committed"} 1');
      expect(metrics).toContain('tablemere_roller_rows_total 3');
      expect(metrics).toContain('tablemere_roller_batches_total 2');
      expect(metrics).toContain('tablemere_roller_rejected_rows_total{reason="unknown_field"} 1');
      expect(metrics).toContain('tablemere_roller_roll_duration_seconds_count{outcome="committed"} 1');
      expect(metrics).toContain('tablemere_roller_commit_retries_total 0');
      expect(metrics).toContain(`tablemere_roller_lag_seconds{sink="${sink.id}"} 0`);
      expect(metrics).toContain(`tablemere_roller_pending_batches{sink="${sink.id}"} 0`);
      expect(metrics).toContain(`tablemere_roller_pending_bytes{sink="${sink.id}"} 0`);
      // The sink's policy (the defaults: 300 s, 64 MiB) beside its lag, for the alert rules.
      expect(metrics).toContain(`tablemere_roller_policy_roll_seconds{sink="${sink.id}"} 300\n`);
      expect(metrics).toContain(`tablemere_roller_policy_roll_bytes{sink="${sink.id}"} ${64 * 1024 * 1024}\n`);
      const lastTick = Number(/^tablemere_roller_last_tick_timestamp_seconds (\S+)$/m.exec(metrics)?.[1]);
      expect(Date.now() / 1000 - lastTick).toBeLessThan(5);
      expect(metrics).toContain('process_resident_memory_bytes');
    } finally {
      const finished = await stop(roller);
      expect(finished.code).toBe(0);
      expect(logLines(finished.stdout).at(-1)).toMatchObject({ msg: 'stopped' });
    }
    const leases = await stack.pool.query('SELECT count(*)::int AS n FROM sink_leases WHERE sink_id = $1 AND expires_at > now()', [sink.id]);
    expect(leases.rows[0].n).toBe(0);
    const line = logLines(roller.output()).find((l) => l.outcome === 'committed');
    expect(line).toMatchObject({ sink: sink.id, batches: 2, rows: 3, rejected_rows: 1, attempts: 1, snapshot_id: expect.any(String), seconds: expect.any(Number) });
  }, 120_000);

  it('finds a sink whose table came back through the survey', async () => {
    const ns = await newTable();
    const sink = await createSink(stack, `svc_${suffix()}`, `${ns}.events`, { inactivity_seconds: 10 });
    await stack.catalog.dropTable({ namespace: ns, name: 'events' }, { purge: true });
    await send(stack, sink, 'waiting', [{ x: 7 }]);
    const roller = startRoller(stack.rollerEnv({ TABLEMERE_ROLLER_TICK_SECONDS: '1', TABLEMERE_ROLLER_SURVEY_SECONDS: '2' }));
    try {
      await waitFor('table_missing', async () => (await getSink(stack, sink.id)).state === 'table_missing', 60_000);
      await createTable(stack, ns, 'events', [{ name: 'x', type: 'long', required: true }]);
      await waitFor('the roll', async () => (await getSink(stack, sink.id)).lag.batches_waiting === 0, 60_000);
      expect((await getSink(stack, sink.id)).state).toBe('active');
      expect((await readBoth(stack, ns, 'events')).map((r) => r.x)).toEqual([7]);
    } finally {
      expect((await stop(roller)).code).toBe(0);
    }
    expect(logLines(roller.output()).filter((l) => l.reason === 'table_missing').length).toBeGreaterThan(0);
  }, 120_000);

  it('sweeps rejects files older than the retention', async () => {
    const ns = await newTable();
    const sink = await createSink(stack, `svc_${suffix()}`, `${ns}.events`);
    const env = stack.rollerEnv({ TABLEMERE_ROLLER_REJECTS_RETENTION_SECONDS: '2' });
    await send(stack, sink, 'with-reject', [{ x: 1 }, { x: 'no' }]);
    expect((await runCli(['roll', sink.id], env)).code).toBe(0);
    const rejectsFiles = async () => {
      const keys: string[] = [];
      for await (const page of stack.intake.list(rejectsPrefix(sink.id))) keys.push(...page.objects.map((o) => o.key));
      return keys;
    };
    const [first] = await rejectsFiles();
    expect(first).toBeDefined();
    await new Promise((r) => setTimeout(r, 3000));
    await send(stack, sink, 'later', [{ x: 2 }]);
    const run = await runCli(['roll', sink.id], env);
    expect(JSON.parse(run.stdout)).toMatchObject({ outcome: 'committed', swept: 1 });
    expect(await rejectsFiles()).not.toContain(first);
  }, 120_000);
});

describe('a roller that cannot reach its internal API', () => {
  it('is alive (/healthz 200) but not ready (/readyz 503) until a tick reaches the API', async () => {
    const roller = startRoller(stack.rollerEnv({ TABLEMERE_ROLLER_TICK_SECONDS: '1', TABLEMERE_INTERNAL_URL: 'http://127.0.0.1:9' }));
    try {
      const address = await addressOf(roller);
      await new Promise((r) => setTimeout(r, 1500));
      expect((await fetch(`${address}/healthz`)).status).toBe(200);
      const readiness = await fetch(`${address}/readyz`);
      expect(readiness.status).toBe(503);
      expect(await readiness.json()).toMatchObject({ status: 'unavailable', last_tick_at: null });
    } finally {
      await stop(roller);
    }
  }, 60_000);
});

describe('with sinks disabled', () => {
  let off: TestStack;
  beforeAll(async () => {
    off = await startTestStack({ sinksEnabled: false });
  });
  afterAll(async () => off?.stop());

  it('idles', async () => {
    const run = await runCli(['roll', '--all-due'], off.rollerEnv());
    expect(run.code).toBe(0);
    expect(run.stderr).toContain('sinks are disabled');
    const roller = startRoller(off.rollerEnv({ TABLEMERE_ROLLER_TICK_SECONDS: '1' }));
    await waitFor('the idle line', async () => roller.output().includes('sinks are disabled; idling'));
    expect((await stop(roller)).code).toBe(0);
  }, 60_000);
});
