import { InternalSinkList, ROLL_BYTES_MIN, type CreatedSink } from '@tablemere/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSink, createTable, getSink, send } from './support/api.ts';
import { intakeBatches } from './support/expect.ts';
import { pyicebergRows } from './support/readers.ts';
import { addressOf, logLines, startRoller, waitFor, type RunningRoller } from './support/roller.ts';
import { startTestStack, suffix, type ApiInstance, type TestStack } from './support/stack.ts';

/**
 * Two API processes and two rollers on one database: one roller drains a sink's backlog with
 * back-to-back rolls under one lease while the other keeps off, and when the holder is killed
 * mid-backlog the other takes the sink over once the lease runs out and drains the rest the
 * same way, every row in the table exactly once.
 */
let stack: TestStack;
let second: ApiInstance;
const namespaces: string[] = [];

beforeAll(async () => {
  stack = await startTestStack();
  second = await stack.anotherApi();
});

afterAll(async () => {
  await second?.stop();
  await stack?.dropNamespaces(namespaces);
  await stack?.stop();
});

/** The floor of TABLEMERE_ROLLER_LEASE_SECONDS: a dead holder's sink waits at most this long. */
const LEASE_SECONDS = 15;
const TICK_SECONDS = 2;
/** ~48 KB per batch: a roll is bounded by roll_bytes (~690 batches of 32 MiB), not by a batch count. */
const ROWS_PER_BATCH = 12;
const PAD = 'p'.repeat(4000);
/** Batches making `rolls` rolls' worth. */
const rollsOf = (rolls: number) => Math.ceil((rolls * ROLL_BYTES_MIN) / (ROWS_PER_BATCH * (PAD.length + 40)));
const BATCHES = rollsOf(3.2);
const SENDERS = 16;

type Line = Record<string, unknown> & { time: number; msg: string };

/** Why the API calls the sink due now (none: not due). */
async function dueReasons(sinkId: string): Promise<string[]> {
  const res = await fetch(`${stack.internalUrl}/internal/sinks?due=true&sink=${sinkId}`, { headers: { authorization: `Bearer ${stack.bootstrapSecret}` } });
  return InternalSinkList.parse(await res.json()).sinks[0]?.due_reasons ?? [];
}

async function leaseHolder(sinkId: string): Promise<string | undefined> {
  const { rows } = await stack.pool.query<{ roller_id: string }>('SELECT roller_id FROM sink_leases WHERE sink_id = $1 AND expires_at > now()', [sinkId]);
  return rows[0]?.roller_id;
}

/** A backlog of `batches`, sent by SENDERS producers, every other batch through the second API. */
async function sendBacklog(sink: CreatedSink, batches: number): Promise<void> {
  const apis = [stack, { ...stack, apiUrl: second.apiUrl }];
  let next = 0;
  const producer = async () => {
    for (let b = next++; b < batches; b = next++) {
      const rows = Array.from({ length: ROWS_PER_BATCH }, (_, r) => ({ x: b * ROWS_PER_BATCH + r, pad: PAD }));
      await send(apis[b % 2]!, sink, `b${b}`, rows);
    }
  };
  await Promise.all(Array.from({ length: SENDERS }, producer));
}

/** A roller's committed rolls, each with when it started and ended (its clock, ms). */
function committedRolls(lines: Line[]): Array<{ batches: number; seconds: number; start: number; end: number }> {
  return lines
    .filter((l) => l.outcome === 'committed')
    .map((l) => ({ batches: l.batches as number, seconds: l.seconds as number, start: l.time - (l.seconds as number) * 1000, end: l.time }));
}

const rate = (rolls: ReturnType<typeof committedRolls>) => rolls.reduce((n, r) => n + r.batches, 0) / rolls.reduce((s, r) => s + r.seconds, 0);

/** A sink on a new table of its own: due by roll_bytes while a backlog lasts, its tail by inactivity once the sends stop. */
async function busySink(policy: Record<string, number> = { roll_bytes: ROLL_BYTES_MIN, inactivity_seconds: 10 }): Promise<{ ns: string; sink: CreatedSink }> {
  const ns = `takeover_${suffix()}`;
  namespaces.push(ns);
  await createTable(stack, ns, 'events', [
    { name: 'x', type: 'long', required: true },
    { name: 'pad', type: 'string' },
  ]);
  return { ns, sink: await createSink(stack, `takeover_${suffix()}`, `${ns}.events`, policy) };
}

describe('two rollers on one sink', () => {
  it('one drains it back to back while the other keeps off; killed, the other takes over within the lease and drains the rest', async () => {
    const { ns, sink } = await busySink();
    await sendBacklog(sink, BATCHES);
    expect((await getSink(stack, sink.id)).lag.batches_waiting).toBe(BATCHES);

    const env = (id: string, internalUrl: string) =>
      stack.rollerEnv({
        TABLEMERE_ROLLER_ID: id,
        TABLEMERE_INTERNAL_URL: internalUrl,
        TABLEMERE_ROLLER_LEASE_SECONDS: String(LEASE_SECONDS),
        TABLEMERE_ROLLER_TICK_SECONDS: String(TICK_SECONDS),
        TABLEMERE_ROLLER_UPKEEP_SECONDS: '0',
      });
    const rollers: Record<string, RunningRoller> = {
      'roller-a': startRoller(env('roller-a', stack.internalUrl)),
      'roller-b': startRoller(env('roller-b', second.internalUrl)),
    };
    const lines = (id: string) => logLines(rollers[id]!.output()) as Line[];
    let killedAt = 0;
    let takenAt = 0;
    let holder = '';
    let other = '';
    let backToBack = 0;
    try {
      await waitFor('a roller to lease the sink', async () => (holder = (await leaseHolder(sink.id)) ?? '') !== '', 30_000);
      other = holder === 'roller-a' ? 'roller-b' : 'roller-a';
      // Its first roll went through and it rolls again at once, under the same lease: kill it in that roll.
      await waitFor('a back-to-back roll', async () => lines(holder).some((l) => l.back_to_back === 1), 60_000);
      rollers[holder]!.child.kill('SIGKILL');
      killedAt = Date.now();
      expect(committedRolls(lines(other))).toEqual([]);

      await waitFor('the other roller to take the sink over', async () => (await leaseHolder(sink.id)) === other, (LEASE_SECONDS + TICK_SECONDS + 10) * 1000);
      takenAt = Date.now();
      await waitFor('the rest to roll', async () => (await getSink(stack, sink.id)).lag.batches_waiting === 0, 90_000);
      const metrics = await (await fetch(`${await addressOf(rollers[other]!)}/metrics`)).text();
      backToBack = Number(/^tablemere_roller_back_to_back_rolls_total (\d+)$/m.exec(metrics)?.[1]);
    } finally {
      for (const roller of Object.values(rollers)) roller.child.kill('SIGTERM');
    }
    const finished = await rollers[other]!.finished;
    expect(finished.code).toBe(0);

    const before = committedRolls(lines(holder));
    const after = committedRolls(lines(other));
    const takeover = (takenAt - killedAt) / 1000;
    console.log(
      `[takeover] ${BATCHES} batches; ${holder}: ${before.length} roll(s) at ${rate(before).toFixed(0)} batches/s before the kill; ` +
        `${other} took over ${takeover.toFixed(1)} s after it, then ${after.length} rolls at ${rate(after).toFixed(0)} batches/s, ` +
        `gaps between them ${after.slice(1).map((r, i) => r.start - after[i]!.end).join(', ')} ms`,
    );
    // Taken over once the dead holder's lease ran out, at the next tick or so.
    expect(takeover).toBeLessThan(LEASE_SECONDS + TICK_SECONDS + 5);
    // The rest in one run of back-to-back rolls: each started as the one before ended, not a tick later.
    expect(after.length).toBeGreaterThanOrEqual(2);
    for (let i = 1; i < after.length; i++) expect(after[i]!.start - after[i - 1]!.end).toBeLessThan(1000);
    expect(lines(other).filter((l) => l.back_to_back !== undefined)).toHaveLength(after.length - 1);
    expect(lines(other).find((l) => l.ended !== undefined)).toMatchObject({ rolls: after.length, ended: 'not_due' });
    expect(backToBack).toBe(after.length - 1);

    const xs = (await pyicebergRows(ns, 'events', stack.env, ['x'])).map((r) => Number(r.x)).sort((a, b) => a - b);
    expect(xs).toHaveLength(BATCHES * ROWS_PER_BATCH);
    expect(xs.every((x, i) => x === i)).toBe(true);
    expect(await intakeBatches(stack, sink.id)).toEqual([]);
  }, 180_000);
});

describe('one roller, one slot, two due sinks', () => {
  it('a sink rolling back to back leaves its slot to a more overdue sink between two rolls', async () => {
    const big = await busySink();
    // Not due (roll_seconds 300, no inactivity) until the test makes its batch old.
    const small = await busySink({});
    await send(stack, small.sink, 'only', [{ x: 0 }]);
    await sendBacklog(big.sink, rollsOf(1.3));
    // All of the big backlog due by inactivity too, so what is left after one roll is still due.
    await waitFor('the big sink due by inactivity', async () => (await dueReasons(big.sink.id)).includes('inactivity'), 30_000);
    const roller = startRoller(
      // Ticks well within one roll (~2 s or more), so the waiting sink is seen while the big one rolls.
      stack.rollerEnv({ TABLEMERE_ROLLER_ID: 'one-slot', TABLEMERE_ROLLER_CONCURRENCY: '1', TABLEMERE_ROLLER_TICK_SECONDS: '0.5', TABLEMERE_ROLLER_UPKEEP_SECONDS: '0' }),
    );
    const lines = () => logLines(roller.output()) as Line[];
    try {
      await waitFor('the big sink to be leased', async () => (await leaseHolder(big.sink.id)) === 'one-slot', 30_000);
      // Its single batch an hour old: the small sink is due, more overdue than the big one, and waits for the slot.
      await stack.pool.query("UPDATE sink_batches SET received_at = received_at - interval '1 hour' WHERE sink_id = $1", [small.sink.id]);
      await waitFor('both to roll', async () => (await Promise.all([big, small].map(async ({ sink }) => (await getSink(stack, sink.id)).lag.batches_waiting))).every((n) => n === 0), 90_000);
    } finally {
      roller.child.kill('SIGTERM');
    }
    expect((await roller.finished).code).toBe(0);
    // The big sink's first roll ends its run for the waiting one, which rolls before the big one's second.
    expect(lines().filter((l) => l.outcome === 'committed').map((l) => l.sink)).toEqual([big.sink.id, small.sink.id, big.sink.id]);
    expect((await pyicebergRows(small.ns, 'events', stack.env, ['x'])).map((r) => Number(r.x))).toEqual([0]);
  }, 120_000);
});
