import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { type InternalApi, InternalApiError } from './internal-api.ts';
import { LeftLeases, SinkLease } from './lease.ts';

const log = pino({ level: 'silent' });
const SINK = 'snk_000000000001';

/** A fake internal API: records every call; `down` makes every call fail as unavailable. */
function fakeApi() {
  const calls: Array<{ call: string; lease_id?: string; error?: unknown }> = [];
  const state = { down: false, taken: false, leases: 0 };
  const unavailable = () => new InternalApiError('unavailable', 'no answer from the internal API');
  const lostLease = () => new InternalApiError('refused', '409 lease_lost', 409, 'lease_lost');
  const api = {
    async lease(_sink: string, request: { lease_id?: string }) {
      calls.push({ call: 'lease', ...(request.lease_id ? { lease_id: request.lease_id } : {}) });
      if (state.down) throw unavailable();
      if (request.lease_id !== undefined && state.taken) throw lostLease();
      return { lease_id: request.lease_id ?? `lease-${++state.leases}` };
    },
    async releaseLease(_sink: string, leaseId: string) {
      calls.push({ call: 'release', lease_id: leaseId });
      if (state.down) throw unavailable();
      return { released: !state.taken };
    },
    async setRollError(_sink: string, request: { lease_id: string; error: unknown }) {
      calls.push({ call: 'roll-error', lease_id: request.lease_id, error: request.error });
      if (state.down) throw unavailable();
      if (state.taken) throw lostLease();
      return { sink_id: SINK, roll_error: { code: 'api_error', message: 'm', since: 'now', last_at: 'now', attempts: 1 } };
    },
  };
  return { api: api as unknown as InternalApi, calls, state };
}

const failure = { code: 'api_error', message: 'POST /internal/sinks/x/rolls: no answer' };

describe('a lease the API could not take back', () => {
  it('is left with its failure, taken again by renewal with the same id only once quiet, and the failure told first', async () => {
    const { api, calls, state } = fakeApi();
    const left = new LeftLeases(api, log, 200);
    const lease = (await SinkLease.acquire(api, SINK, 'r1', 60, log, left))!;
    lease.unrecorded = failure;
    state.down = true;
    await lease.release(200);
    expect(left.get(SINK)).toMatchObject({ leaseId: 'lease-1', failure });

    state.down = false;
    // Not quiet yet: no roll of the sink may start here.
    expect(await SinkLease.acquire(api, SINK, 'r1', 60, log, left)).toBeUndefined();
    await new Promise((r) => setTimeout(r, 220));
    const again = (await SinkLease.acquire(api, SINK, 'r1', 60, log, left))!;
    expect(again.id).toBe('lease-1');
    expect(left.get(SINK)).toBeUndefined();
    expect(calls.filter((c) => c.call === 'lease').at(-1)).toEqual({ call: 'lease', lease_id: 'lease-1' });
    expect(await again.tellUnrecorded()).toMatchObject({ code: 'api_error', attempts: 1 });
    expect(calls.at(-1)).toEqual({ call: 'roll-error', lease_id: 'lease-1', error: failure });
    await again.release();
    expect(calls.at(-1)).toEqual({ call: 'release', lease_id: 'lease-1' });
  });

  it('is given back in the background once the API answers, its failure recorded first', async () => {
    const { api, calls, state } = fakeApi();
    const left = new LeftLeases(api, log, 0);
    const lease = (await SinkLease.acquire(api, SINK, 'r1', 60, log, left))!;
    lease.unrecorded = failure;
    state.down = true;
    await lease.release();
    await left.settle(SINK);
    expect(left.get(SINK)).toBeDefined();
    state.down = false;
    await left.settle(SINK);
    expect(left.get(SINK)).toBeUndefined();
    expect(calls.slice(-2)).toEqual([
      { call: 'roll-error', lease_id: 'lease-1', error: failure },
      { call: 'release', lease_id: 'lease-1' },
    ]);
  });

  it('taken over meanwhile, is dropped and a new lease asked for like any roller', async () => {
    const { api, state } = fakeApi();
    const left = new LeftLeases(api, log, 0);
    const lease = (await SinkLease.acquire(api, SINK, 'r1', 60, log, left))!;
    state.down = true;
    await lease.release();
    state.down = false;
    state.taken = true;
    const next = (await SinkLease.acquire(api, SINK, 'r1', 60, log, left))!;
    expect(next.id).toBe('lease-2');
    expect(left.get(SINK)).toBeUndefined();
    await next.release();
  });
});

describe('a commit in doubt', () => {
  it('keeps the lease (renewed) for the margin before it is given back', async () => {
    const { api, calls } = fakeApi();
    const lease = (await SinkLease.acquire(api, SINK, 'r1', 60, log))!;
    lease.commitInDoubt();
    const started = Date.now();
    await lease.release(300);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(calls.at(-1)).toEqual({ call: 'release', lease_id: 'lease-1' });
  });
});
