/**
 * A roller cut off mid-roll and the network healed (issue 35, research/54). The link between a
 * roller service and the API's internal listener (or the store, or the catalog) goes down at an
 * exact step of a roll and comes back 18 s later; the roller's every call is bounded at 2 s. The lease is 60 s
 * (the default): a roller that could not take back the lease it could not give back would leave
 * the sink waiting ~40 s after the heal. The sink must roll again within 15 s of the heal, every
 * row once in the table (PyIceberg), and the failure recorded with its reason on the sink, in the
 * status page's counts and in the roller's metrics.
 */
import { type CreatedSink, Sink, OperatorStatus } from '@tablemere/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { send, sinkOnNewTable } from './support/api.ts';
import { intakeBatches } from './support/expect.ts';
import { startLink, type Link } from './support/link.ts';
import { pyicebergRows } from './support/readers.ts';
import { addressOf, logLines, startRoller, waitFor, type RunningRoller } from './support/roller.ts';
import { startTestStack, suffix, type TestStack } from './support/stack.ts';
import { stackEnv } from '../../../tests/support/stack.ts';

let stack: TestStack;
const namespaces: string[] = [];

beforeAll(async () => {
  stack = await startTestStack();
});

afterAll(async () => {
  await stack?.dropNamespaces(namespaces);
  await stack?.stop();
});

const CUT_SECONDS = 18;
/** After the heal, the sink rolls within this: a tick (1 s), the lease margin left, a roll. */
const HEALED_WITHIN_MS = 15_000;
const ROWS_PER_BATCH = 50;

const ROLLER = {
  TABLEMERE_ROLLER_TICK_SECONDS: '1',
  TABLEMERE_ROLLER_LEASE_SECONDS: '60',
  TABLEMERE_ROLLER_CALL_TIMEOUT_SECONDS: '2',
  TABLEMERE_ROLLER_SURVEY_SECONDS: '3600',
  TABLEMERE_ROLLER_UPKEEP_SECONDS: '0',
};

/** Sends `count` batches numbered from `first`, and makes them due at once (an hour old). */
async function sendBatches(sink: CreatedSink, first: number, count: number, on: TestStack = stack): Promise<void> {
  for (let b = first; b < first + count; b++) {
    await send(on, sink, `b${b}`, Array.from({ length: ROWS_PER_BATCH }, (_, r) => ({ x: b * ROWS_PER_BATCH + r, who: `b${b}` })));
  }
  await on.pool.query("UPDATE sink_batches SET received_at = received_at - interval '1 hour' WHERE sink_id = $1", [sink.id]);
}

type Line = Record<string, unknown> & { time: number; msg: string };
const lines = (roller: RunningRoller) => logLines(roller.output()) as Line[];

async function failures(sinkId: string, on: TestStack = stack): Promise<string[]> {
  const { rows } = await on.pool.query<{ code: string }>('SELECT code FROM sink_roll_failures WHERE sink_id = $1 ORDER BY code', [sinkId]);
  return rows.map((r) => r.code);
}

async function publicGet<T>(path: string, schema: { parse(value: unknown): T }): Promise<T> {
  const res = await fetch(`${stack.apiUrl}${path}`, { headers: { authorization: `Bearer ${stack.adminKey}` } });
  expect(res.status).toBe(200);
  return schema.parse(await res.json());
}

/** Every x of `batches` batches, once: what the table must hold. */
const expectedXs = (batches: number) => Array.from({ length: batches * ROWS_PER_BATCH }, (_, i) => i);

async function xsInTable(ns: string): Promise<number[]> {
  return (await pyicebergRows(ns, 'events', undefined, ['x'])).map((r) => Number(r.x)).sort((a, b) => a - b);
}

/**
 * Runs a roller whose link (to `via`) goes down at the first request matching `cutAt`, heals it
 * CUT_SECONDS later, and waits for the sink's first committed roll after the heal. Returns the
 * roller (still running) and the link.
 */
async function rollThroughCut(
  sink: CreatedSink,
  link: Link,
  cutAt: RegExp | [RegExp, number],
  env: Record<string, string>,
  during?: () => Promise<void>,
  on: TestStack = stack,
): Promise<{ roller: RunningRoller; committedAfterHealMs: number }> {
  if (Array.isArray(cutAt)) link.cutAt(...cutAt);
  else link.cutAt(cutAt);
  const roller = startRoller(on.rollerEnv({ ...ROLLER, TABLEMERE_ROLLER_ID: `partition-${suffix()}`, ...env }));
  try {
    await waitFor('the link to go down mid-roll', async () => link.down, 30_000);
    await during?.();
    await new Promise((r) => setTimeout(r, CUT_SECONDS * 1000 - (Date.now() - link.cutAtMs!)));
    link.heal();
    let committed: Line | undefined;
    await waitFor(
      'a committed roll after the heal',
      async () => {
        committed = lines(roller).find((l) => l.sink === sink.id && l.outcome === 'committed' && l.time >= link.healedAtMs!);
        return committed !== undefined;
      },
      40_000,
    );
    return { roller, committedAfterHealMs: committed!.time - link.healedAtMs! };
  } catch (error) {
    roller.child.kill('SIGKILL');
    process.stderr.write(roller.output().slice(-6000));
    throw error;
  }
}

/**
 * The roller's `roll failed` lines for the sink while cut: at least one, every one for `reason`,
 * the first within `firstWithinMs` of the cut. Prints when they came, for the run's record.
 */
function failedWhileCut(roller: RunningRoller, sinkId: string, link: Link, reason: string, firstWithinMs: number, where: string, committedAfterHealMs: number): Line[] {
  const failedLines = lines(roller).filter((l) => l.sink === sinkId && typeof l.msg === 'string' && l.msg.startsWith('roll failed'));
  expect(failedLines.length).toBeGreaterThan(0);
  expect(new Set(failedLines.map((l) => l.reason))).toEqual(new Set([reason]));
  expect(failedLines[0]!.time - link.cutAtMs!).toBeLessThan(firstWithinMs);
  console.info(`cut at ${where}: ${failedLines.length} failed rolls, the first ${failedLines[0]!.time - link.cutAtMs!} ms after the cut; committed ${committedAfterHealMs} ms after the heal`);
  return failedLines;
}

async function stopRoller(roller: RunningRoller): Promise<void> {
  roller.child.kill('SIGTERM');
  await roller.finished;
}

/** The roller's count of failed rolls with `reason`, from /metrics. */
async function failureMetric(roller: RunningRoller, reason: string): Promise<number> {
  const text = await (await fetch(`${await addressOf(roller)}/metrics`)).text();
  const match = new RegExp(`^tablemere_roller_roll_failures_total\\{reason="${reason}"\\} (\\d+)$`, 'm').exec(text);
  return Number(match?.[1] ?? 0);
}

describe('a roller cut off from the API mid-roll', () => {
  let link: Link;

  beforeAll(async () => {
    link = await startLink(stack.internalUrl);
  });
  afterAll(async () => {
    await link?.close();
  });

  it('takes back the lease it could not give back, records the failure and rolls within seconds of the heal', async () => {
    const { ns, sink } = await sinkOnNewTable(stack, namespaces, 'part_intent', { inactivity_seconds: 10 });
    await sendBatches(sink, 0, 20);
    // Down as the roll records its intent: the data file is written, nothing committed.
    const { roller, committedAfterHealMs } = await rollThroughCut(sink, link, /^POST \/internal\/sinks\/[^/]+\/rolls /, { TABLEMERE_INTERNAL_URL: link.url });
    try {
      const log = lines(roller);
      const failed = log.find((l) => l.sink === sink.id && l.reason === 'api_error' && typeof l.msg === 'string' && l.msg.startsWith('roll failed'));
      expect(failed, 'the roll failed as api_error').toBeDefined();
      // Failed within the bounds, not after the OS gave up: the intent call (2 s), then recording
      // the failure (2 s, failing too) before the roll's line.
      expect(failed!.time - link.cutAtMs!).toBeLessThan(7_000);
      expect(log.some((l) => l.sink === sink.id && l.msg.startsWith('could not give the lease back'))).toBe(true);
      expect(log.some((l) => l.sink === sink.id && l.msg === 'took back the lease left when the API was out of reach')).toBe(true);
      expect(committedAfterHealMs).toBeLessThan(HEALED_WITHIN_MS);
      console.info(`cut at the intent: failed ${failed!.time - link.cutAtMs!} ms after the cut, committed ${committedAfterHealMs} ms after the heal`);

      expect(await xsInTable(ns)).toEqual(expectedXs(20));
      expect(await intakeBatches(stack, sink.id)).toEqual([]);
      // Recorded once the API answered again, counted, and the run ended by the roll that went through.
      expect(await failures(sink.id)).toEqual(['api_error']);
      expect((await publicGet(`/v1/sinks/${sink.id}`, Sink)).roll_error).toBeNull();
      const status = await publicGet('/v1/status', OperatorStatus);
      expect(status.sinks.find((s) => s.id === sink.id)?.last_day).toMatchObject({ failed_rolls: 1, failure_reasons: { api_error: 1 } });
      const { rows: audit } = await stack.pool.query<{ event: string }>("SELECT event FROM audit_events WHERE subject = $1 AND event LIKE 'sink.%' ORDER BY id", [sink.id]);
      expect(audit.map((a) => a.event)).toEqual(expect.arrayContaining(['sink.stalled', 'sink.recovered']));
      expect(await failureMetric(roller, 'api_error')).toBe(1);
    } finally {
      await stopRoller(roller);
    }
  }, 60_000);

  it('after a commit whose report was cut off, settles the roll as committed and rolls what came meanwhile', async () => {
    const { ns, sink } = await sinkOnNewTable(stack, namespaces, 'part_report', { inactivity_seconds: 10 });
    await sendBatches(sink, 0, 10);
    // Down as the roll reports: committed and its batches deleted, the intent left open.
    const { roller, committedAfterHealMs } = await rollThroughCut(sink, link, /^POST \/internal\/sinks\/[^/]+\/roll /, { TABLEMERE_INTERNAL_URL: link.url }, () =>
      // Producers go on sending through the public API meanwhile.
      sendBatches(sink, 10, 10),
    );
    try {
      expect(committedAfterHealMs).toBeLessThan(HEALED_WITHIN_MS);
      const after = lines(roller).find((l) => l.sink === sink.id && l.outcome === 'committed' && l.time >= link.healedAtMs!)!;
      expect(after.settled, 'the cut roll found committed and reported').toBe(1);
      console.info(`cut at the report: committed ${committedAfterHealMs} ms after the heal`);
      expect(await xsInTable(ns)).toEqual(expectedXs(20));
      expect(await failures(sink.id)).toEqual(['api_error']);
      expect((await publicGet(`/v1/sinks/${sink.id}`, Sink)).roll_error).toBeNull();
    } finally {
      await stopRoller(roller);
    }
  }, 60_000);
});

describe('a roller cut off from the store mid-roll', () => {
  it('fails as store_unavailable within the bound, records each failure, and rolls soon after the heal', async () => {
    const link = await startLink(stack.env.AWS_ENDPOINT_URL!);
    try {
      const { ns, sink } = await sinkOnNewTable(stack, namespaces, 'part_store', { inactivity_seconds: 10 });
      await sendBatches(sink, 0, 20);
      // Down at the first read of a batch object (a GET without a query; the listing has one).
      const { roller, committedAfterHealMs } = await rollThroughCut(sink, link, /^GET \/[^?\s]+ HTTP/, { AWS_ENDPOINT_URL: link.url });
      try {
        expect(committedAfterHealMs).toBeLessThan(HEALED_WITHIN_MS);
        const failedLines = failedWhileCut(roller, sink.id, link, 'store_unavailable', 7_000, 'the first batch read', committedAfterHealMs);
        expect(await xsInTable(ns)).toEqual(expectedXs(20));
        // Every failed roll recorded and counted, by the API and by the roller alike.
        const recorded = await failures(sink.id);
        expect(recorded).toEqual(failedLines.map(() => 'store_unavailable'));
        const status = await publicGet('/v1/status', OperatorStatus);
        expect(status.sinks.find((s) => s.id === sink.id)?.last_day).toMatchObject({ failed_rolls: failedLines.length, failure_reasons: { store_unavailable: failedLines.length } });
        expect(await failureMetric(roller, 'store_unavailable')).toBe(failedLines.length);
      } finally {
        await stopRoller(roller);
      }
    } finally {
      await link.close();
    }
  }, 60_000);
});

describe('a roller cut off from the catalog mid-roll', () => {
  let link: Link;
  let cut: TestStack;
  const own: string[] = [];

  beforeAll(async () => {
    const env = stackEnv();
    const catalog = new URL(env.ICEBERG_REST_URI!);
    link = await startLink(catalog.origin);
    // The warehouse is registered at the link: the roller reaches the catalog only through it.
    cut = await startTestStack({ env: { ...env, ICEBERG_REST_URI: `${link.url}${catalog.pathname.replace(/\/$/, '')}` } });
  });
  afterAll(async () => {
    await cut?.dropNamespaces(own);
    await cut?.stop();
    await link?.close();
  });

  it('fails as catalog_unavailable within the bound while cut at the table load, records each failure, and rolls after the heal', async () => {
    const { ns, sink } = await sinkOnNewTable(cut, own, 'part_catalog', { inactivity_seconds: 10 });
    await sendBatches(sink, 0, 20, cut);
    const load = /^GET \S*\/namespaces\/[^/\s]+\/tables\/[^/\s?]+ HTTP/;
    const { roller, committedAfterHealMs } = await rollThroughCut(sink, link, load, {}, undefined, cut);
    try {
      expect(committedAfterHealMs).toBeLessThan(HEALED_WITHIN_MS);
      const failedLines = failedWhileCut(roller, sink.id, link, 'catalog_unavailable', 5_000, 'the table load', committedAfterHealMs);
      expect(await xsInTable(ns)).toEqual(expectedXs(20));
      expect(await failures(sink.id, cut)).toEqual(failedLines.map(() => 'catalog_unavailable'));
      expect(await failureMetric(roller, 'catalog_unavailable')).toBe(failedLines.length);
    } finally {
      await stopRoller(roller);
    }
  }, 60_000);

  it('rides out a cut at the append commit: the unknown outcome is settled on the new base and the rows land once after the heal', async () => {
    const { ns, sink } = await sinkOnNewTable(cut, own, 'part_commit', { inactivity_seconds: 10 });
    await sendBatches(sink, 0, 20, cut);
    // The second table commit: the first roll's properties are the first, its append the second.
    const commit = /^POST \S*\/namespaces\/[^/\s]+\/tables\/[^/\s]+ HTTP/;
    const { roller, committedAfterHealMs } = await rollThroughCut(sink, link, [commit, 2], {}, undefined, cut);
    try {
      expect(committedAfterHealMs).toBeLessThan(HEALED_WITHIN_MS);
      const log = lines(roller);
      expect(log.some((l) => l.sink === sink.id && l.kind === 'commit_state_unknown')).toBe(true);
      const committed = log.filter((l) => l.sink === sink.id && l.outcome === 'committed');
      expect(committed).toHaveLength(1);
      expect(Number(committed[0]!.attempts)).toBeGreaterThanOrEqual(2);
      console.info(`cut at the append's commit: committed ${committedAfterHealMs} ms after the heal in one roll of ${committed[0]!.seconds} s, ${committed[0]!.attempts} attempts`);
      expect(await xsInTable(ns)).toEqual(expectedXs(20));
    } finally {
      await stopRoller(roller);
    }
  }, 60_000);
});
