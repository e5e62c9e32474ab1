import type { CreatedSink } from '@tablemere/contracts';
import { query } from '@tablemere/db';
import { BATCH_CONTENT_TYPE, BATCH_METADATA, batchKey } from '@tablemere/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INTAKE_CRASH_POINTS } from '../../api/src/domain/intake/segments.ts';
import { storedBatches } from '../../../tests/support/intake.ts';
import { batchStatus, deleteSink, getSink, sinkOnNewTable, updateSink } from './support/api.ts';
import { expireLease, intakeBatches, readBoth } from './support/expect.ts';
import { runCli, summaries } from './support/roller.ts';
import { startTestStack, suffix, type TestStack } from './support/stack.ts';

/**
 * Intake segments (issue 34): sends to a sink that arrive together are one object in one PUT,
 * each batch still itself (its replay, its conflict, its status), and every batch reaches the
 * table exactly once through API and roller crashes, a sink delete and an upgrade from the
 * one-object-per-batch layout. Every row is counted by PyIceberg and DuckDB.
 */
let stack: TestStack;
const namespaces: string[] = [];

beforeAll(async () => {
  stack = await startTestStack();
});

afterAll(async () => {
  await stack?.dropNamespaces(namespaces);
  await stack?.stop();
});

const sinkOn = (policy: Record<string, unknown> = {}) => sinkOnNewTable(stack, namespaces, 'seg', policy);

/** Batch `i`'s rows: two fresh x values. */
const rowsOf = (i: number) => [{ x: 2 * i, who: `b-${i}` }, { x: 2 * i + 1 }];

interface Answered {
  status: number;
  body: Record<string, unknown>;
  replayed: boolean;
}

/** One send with the send key, whatever it is answered. */
async function post(url: string, sink: CreatedSink, batchId: string, body: unknown): Promise<Answered> {
  const res = await fetch(`${url}/v1/sinks/${sink.id}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${sink.send_key}`, 'idempotency-key': batchId, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown>, replayed: res.headers.get('idempotent-replayed') === 'true' };
}

/** `count` sends at once, batch ids `<tag>-<i>` with the rows of batch `first + i`; fails unless every one is 202. */
async function sendTogether(sink: CreatedSink, tag: string, count: number, first = 0): Promise<Answered[]> {
  const answers = await Promise.all(Array.from({ length: count }, (_, i) => post(stack.apiUrl, sink, `${tag}-${i}`, rowsOf(first + i))));
  expect(answers.map((a) => a.status)).toEqual(answers.map(() => 202));
  return answers;
}

async function rollClean(sinkId: string): Promise<Record<string, unknown>> {
  const run = await runCli(['roll', sinkId], stack.rollerEnv());
  expect(run.code, run.stderr).toBe(0);
  return summaries(run)[0]!;
}

/** Every x of `batches` batches (rowsOf 0..batches-1) is in the table exactly once, and nothing else. */
async function expectRows(ns: string, batches: number): Promise<void> {
  const xs = (await readBoth(stack, ns, 'events')).map((r) => Number(r.x));
  expect(xs).toEqual(Array.from({ length: 2 * batches }, (_, i) => i));
}

/** The distinct intake objects (segments or batch objects) holding the sink's pending batches. */
async function objectsOf(sinkId: string): Promise<string[]> {
  return [...new Set((await storedBatches(stack.intake, sinkId)).map((b) => b.key))];
}

describe('sends grouped into segments', () => {
  it('writes sends that arrive within linger_ms as one object; each batch is still itself', async () => {
    // The longest linger, so that all 40 arrive within it even on a loaded machine.
    const { ns, sink } = await sinkOn({ linger_ms: 1000 });
    const answers = await sendTogether(sink, 'g', 40);
    const stored = await storedBatches(stack.intake, sink.id);
    expect(stored.map((b) => b.id).sort()).toEqual(answers.map((a) => a.body.batch_id).sort());
    expect(await objectsOf(sink.id)).toHaveLength(1);
    // Each batch's bytes as an object of the one-object layout would hold them, with its own received time.
    const seventh = stored.find((b) => b.id === 'g-7')!;
    expect(seventh.bytes.toString()).toBe(rowsOf(7).map((r) => JSON.stringify(r)).join('\n'));
    expect(seventh.received).toBe(answers[7]!.body.received_at);

    // A replay of a grouped batch is answered as it was first, and stores nothing; another body under its id is 409.
    const replay = await post(stack.apiUrl, sink, 'g-7', rowsOf(7));
    expect({ status: replay.status, replayed: replay.replayed, body: replay.body }).toEqual({ status: 200, replayed: true, body: answers[7]!.body });
    expect((await post(stack.apiUrl, sink, 'g-7', rowsOf(8))).body).toMatchObject({ error: { code: 'batch_id_conflict' } });
    expect(await objectsOf(sink.id)).toHaveLength(1);
    expect(await batchStatus(stack, sink.id, 'g-7')).toMatchObject({ state: 'pending' });
    expect((await getSink(stack, sink.id)).lag.batches_waiting).toBe(40);

    expect(await rollClean(sink.id)).toMatchObject({ outcome: 'committed', batches: 40, rows: 80 });
    await expectRows(ns, 40);
    expect(await intakeBatches(stack, sink.id)).toEqual([]);
    expect(await batchStatus(stack, sink.id, 'g-7')).toMatchObject({ state: 'committed' });
  });

  it('with linger_ms 0 writes a lone send at once, and groups what arrives during a write', async () => {
    const { ns, sink } = await sinkOn();
    const started = performance.now();
    await sendTogether(sink, 'lone', 1);
    const lone = performance.now() - started;
    await sendTogether(sink, 'many', 48, 1);
    const objects = await objectsOf(sink.id);
    // The lone send's object, then the many: the first of them alone, the rest while it was written.
    expect(objects.length).toBeGreaterThanOrEqual(2);
    expect(objects.length).toBeLessThan(25);

    // linger_ms holds a lone send back that long, and no longer than it needs.
    await updateSink(stack, sink.id, { linger_ms: 500 });
    const lingered = performance.now();
    await post(stack.apiUrl, sink, 'late', rowsOf(49));
    const waited = performance.now() - lingered;
    expect(waited).toBeGreaterThanOrEqual(490);
    expect(lone, `a lone send with linger_ms 0 took ${lone.toFixed(0)} ms`).toBeLessThan(waited);
    expect((await getSink(stack, sink.id)).linger_ms).toBe(500);

    expect(await rollClean(sink.id)).toMatchObject({ outcome: 'committed', batches: 50 });
    await expectRows(ns, 50);
  });

  it('discards every segment of a deleted sink', async () => {
    const { sink } = await sinkOn({ linger_ms: 100 });
    await sendTogether(sink, 'd', 30);
    expect((await objectsOf(sink.id)).length).toBeGreaterThan(0);
    const deleted = await deleteSink(stack, sink.id);
    expect(deleted).toMatchObject({ pending_batches_discarded: 30, intake_cleared: true });
    expect(await intakeBatches(stack, sink.id)).toEqual([]);
  });
});

describe('through crashes and an upgrade', () => {
  it('a roller killed after its commit leaves grouped segments the next roll deletes, appending nothing twice', async () => {
    const { ns, sink } = await sinkOn({ linger_ms: 200 });
    await sendTogether(sink, 'c', 30);
    const crashed = await runCli(['roll', sink.id], stack.rollerEnv({ TABLEMERE_ROLLER_CRASH_AT: 'after-commit' }));
    expect(crashed.signal, crashed.stderr).toBe('SIGKILL');
    expect((await intakeBatches(stack, sink.id)).length).toBe(30);
    await expireLease(stack, sink.id);
    expect(await rollClean(sink.id)).toMatchObject({ outcome: 'idle', settled: 1 });
    await expectRows(ns, 30);
    expect(await intakeBatches(stack, sink.id)).toEqual([]);
    expect((await getSink(stack, sink.id)).lag.batches_waiting).toBe(0);
  });

  for (const point of INTAKE_CRASH_POINTS) {
    it(`an API killed ${point} loses nothing: every retried batch is stored once and rolled once`, async () => {
      const { ns, sink } = await sinkOn({ linger_ms: 300 });
      const dying = await stack.apiProcess(`segments-${point}-${suffix()}`, { TABLEMERE_API_CRASH_AT: point });
      const count = 16;
      const first = await Promise.allSettled(Array.from({ length: count }, (_, i) => post(dying.url, sink, `k-${i}`, rowsOf(i))));
      // No send was answered: the process died with the segment's PUT around it.
      expect(first.map((f) => f.status)).toEqual(first.map(() => 'rejected'));
      await new Promise<void>((resolve) => (dying.child.exitCode !== null || dying.child.signalCode !== null ? resolve() : dying.child.once('exit', () => resolve())));
      expect(dying.child.signalCode).toBe('SIGKILL');
      expect((await objectsOf(sink.id)).length).toBe(point === 'after-segment-put' ? 1 : 0);

      // The producers send again, as told, to a new process: claims left 'storing' are in
      // progress (409 batch_in_progress) until stale, then each goes where its segment says.
      const next = await stack.apiProcess(`segments-after-${point}-${suffix()}`, { TABLEMERE_STALE_CLAIM_SECONDS: '2' });
      let received = new Map<string, string>();
      try {
        const answers = await Promise.all(
          Array.from({ length: count }, async (_, i) => {
            for (const deadline = Date.now() + 30_000; ; ) {
              const answer = await post(next.url, sink, `k-${i}`, rowsOf(i));
              if ((answer.body as { error?: { code?: string } }).error?.code !== 'batch_in_progress' || Date.now() > deadline) return answer;
              await new Promise((resolve) => setTimeout(resolve, 300));
            }
          }),
        );
        expect(answers.map((a) => [a.status, a.status === 202 ? 'ok' : JSON.stringify(a.body)])).toEqual(answers.map(() => [202, 'ok']));
        received = new Map(answers.map((a) => [a.body.batch_id as string, a.body.received_at as string]));
      } finally {
        next.child.kill('SIGTERM');
      }
      const stored = await storedBatches(stack.intake, sink.id);
      // Each answer's received time is the one stored with the batch (the roll's __ingest_ts).
      expect(new Map(stored.map((b) => [b.id, b.received]))).toEqual(received);
      expect(stored.map((b) => b.id).sort()).toEqual(Array.from({ length: count }, (_, i) => `k-${i}`).sort());
      // Stored by the dead process, the batches stay in its segment; else the retries wrote them.
      if (point === 'after-segment-put') expect(await objectsOf(sink.id)).toHaveLength(1);

      expect(await rollClean(sink.id)).toMatchObject({ outcome: 'committed', batches: count, rows: 2 * count });
      await expectRows(ns, count);
    }, 120_000);
  }

  it('rolls batches the one-object layout stored before the upgrade beside new segments, each once', async () => {
    const { ns, sink } = await sinkOn({ linger_ms: 100 });
    // As the intake before segments left them: one object per batch, its ledger row pending.
    const legacy = 6;
    for (let i = 0; i < legacy; i++) {
      const ndjson = Buffer.from(rowsOf(i).map((r) => JSON.stringify(r)).join('\n'));
      const received = new Date(Date.now() - 60_000 + i).toISOString().replace('Z', '000Z');
      await stack.intake.put(batchKey(sink.id, `old-${i}`), ndjson, {
        contentType: BATCH_CONTENT_TYPE,
        metadata: { [BATCH_METADATA.received]: received, [BATCH_METADATA.rows]: '2', [BATCH_METADATA.sink]: sink.id },
      });
      await query(
        stack.pool,
        `INSERT INTO sink_batches (ledger_day, sink_id, batch_id, body_digest, bytes, rows, rejected, received_at, state)
         SELECT day, $1, $2, '\\x00112233445566778899aabbccddeeff'::bytea, $3, 2, 0, $4::timestamptz, 'pending' FROM sink_ledger_today`,
        [sink.id, `old-${i}`, ndjson.length, received],
      );
    }
    // After the upgrade: new sends go into segments.
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => post(stack.apiUrl, sink, `new-${i}`, rowsOf(legacy + i))));
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 202));
    const objects = await objectsOf(sink.id);
    expect(objects.filter((key) => key.endsWith('.ndjson'))).toHaveLength(legacy);
    expect(objects.filter((key) => key.endsWith('.seg')).length).toBeGreaterThan(0);

    expect(await rollClean(sink.id)).toMatchObject({ outcome: 'committed', batches: legacy + 10, rows: 2 * (legacy + 10) });
    await expectRows(ns, legacy + 10);
    expect(await intakeBatches(stack, sink.id)).toEqual([]);
    expect(await batchStatus(stack, sink.id, 'old-3')).toMatchObject({ state: 'committed' });
    expect(await batchStatus(stack, sink.id, 'new-3')).toMatchObject({ state: 'committed' });
  });

  it('takes one copy of an id found both as a stray batch object and in a segment', async () => {
    const { ns, sink } = await sinkOn();
    // A write of the one-object layout whose claim was released (its outcome unknown to the old
    // intake), then the same batch sent again after the upgrade.
    const ndjson = Buffer.from(rowsOf(0).map((r) => JSON.stringify(r)).join('\n'));
    await stack.intake.put(batchKey(sink.id, 'twice'), ndjson, {
      contentType: BATCH_CONTENT_TYPE,
      metadata: { [BATCH_METADATA.received]: new Date().toISOString(), [BATCH_METADATA.rows]: '2', [BATCH_METADATA.sink]: sink.id },
    });
    expect((await post(stack.apiUrl, sink, 'twice', rowsOf(0))).status).toBe(202);
    expect((await intakeBatches(stack, sink.id)).sort()).toEqual(['twice', 'twice']);
    expect(await rollClean(sink.id)).toMatchObject({ outcome: 'committed', batches: 1, rows: 2 });
    await expectRows(ns, 1);
    expect(await intakeBatches(stack, sink.id)).toEqual([]);
  });
});
