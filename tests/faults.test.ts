/**
 * The faults drill (issue 35): a stack of its own under 16 producers, while its Postgres is killed
 * and started again twice, its store (SeaweedFS: S3 and the catalog) once, and its Postgres frozen
 * (SIGSTOP) past the API's statement bound. Every process of the stack stays alive, every request
 * is answered (2xx, or 409 batch_in_progress, 429 or 503 with Retry-After) within the bound, sends are taken again within seconds of each
 * dependency's return, and every accepted row is in the table exactly once.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pyicebergRows } from '../apps/roller/test/support/readers.ts';
import { startStack, type Stack } from '../scripts/stack/index.ts';
import { isAlive } from '../scripts/stack/process.ts';
import { busyPorts, stackPorts } from '../scripts/stack/ports.ts';
import { repoRoot } from './support/stack.ts';

const PRODUCERS = 16;
const ROWS_PER_BATCH = 20;
/** Each producer's pause after a batch is taken. */
const PAUSE_MS = 100;
/** The API's bound on each statement (TABLEMERE_DB_TIMEOUT_MS), short so that the drill is quick. */
const DB_TIMEOUT_MS = 3_000;
/** The longest a request may take: a connection and two statements, each bounded, and some slack on two busy cores. */
const REQUEST_BOUND_MS = 3 * DB_TIMEOUT_MS + 2_000;
/** How soon after a dependency is back a send must be taken again. */
const BACK_WITHIN_MS = 5_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Answered {
  at: number;
  ms: number;
  status: number;
}

/** The pids of `pid`'s children (a postmaster's backends). */
function childrenOf(pid: number): number[] {
  const out = execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' }).trim();
  return out === '' ? [] : out.split('\n').map((line) => Number(line.trim()));
}

async function freeOffset(): Promise<number> {
  for (const candidate of [11000, 11700, 12400, 13100]) {
    if ((await busyPorts(stackPorts(candidate))).length === 0) return candidate;
  }
  throw new Error('no free port offset for the faults stack');
}

describe('the stack under faults', () => {
  let stack: Stack;
  const said: string[] = [];
  const namespace = `faults_${Date.now()}`;

  beforeAll(async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'tablemere-faults-'));
    chmodSync(dir, 0o755); // Postgres runs as its own user and must reach its data dir
    // The API and the roller inherit this process's environment.
    process.env.TABLEMERE_DB_TIMEOUT_MS = String(DB_TIMEOUT_MS);
    stack = await startStack({ root: repoRoot, dir, portOffset: await freeOffset(), databaseUrl: undefined, say: (line) => said.push(line) });
  }, 180_000);
  afterAll(async () => {
    await stack?.stop();
  });

  it('keeps every process alive, answers within the bound, comes back within seconds and loses or doubles no row', async () => {
    const api = stack.env.TABLEMERE_API_URL!;
    const admin = { authorization: `Bearer ${stack.env.TABLEMERE_API_KEY}`, 'content-type': 'application/json' };
    const created = await fetch(`${api}/v1/sinks`, {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({
        name: `${namespace}_in`,
        warehouse: stack.env.TABLEMERE_WAREHOUSE,
        table: `${namespace}.events`,
        inactivity_seconds: 10,
        create_table: { columns: [{ name: 'p', type: 'long', required: true }, { name: 'seq', type: 'long', required: true }, { name: 'i', type: 'long', required: true }] },
      }),
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const sink = (await created.json()) as { id: string; send_key: string; ingest_url: string };
    const pids = { api: stack.pid('api')!, roller: stack.pid('roller')! };

    const answers: Answered[] = [];
    const accepted = new Set<string>();
    let stopping = false;
    const producer = async (p: number) => {
      for (let seq = 0; !stopping; seq++) {
        const id = `p${p}-${seq}`;
        const body = JSON.stringify(Array.from({ length: ROWS_PER_BATCH }, (_, i) => ({ p, seq, i })));
        // The same batch until it is taken, as a producer must: a lost answer may hide a stored batch.
        for (;;) {
          const at = Date.now();
          let status = 0;
          let retryAfter = 1;
          try {
            const res = await fetch(sink.ingest_url, {
              method: 'POST',
              headers: { authorization: `Bearer ${sink.send_key}`, 'idempotency-key': id, 'content-type': 'application/json' },
              body,
              signal: AbortSignal.timeout(60_000),
            });
            status = res.status;
            retryAfter = Number(res.headers.get('retry-after') ?? 1);
            const text = await res.text();
            // 409 batch_in_progress is a retry answer too (the batch's earlier request is being stored); any other 409 is not.
            if (status === 409 && (JSON.parse(text) as { error: { code: string } }).error.code !== 'batch_in_progress') status = -409;
          } catch {
            status = 0;
          }
          answers.push({ at, ms: Date.now() - at, status });
          if (status === 200 || status === 202) {
            accepted.add(id);
            // A steady fleet (~160 batches a second in all), not a flood that fills the backlog while the store is away.
            await sleep(PAUSE_MS);
            break;
          }
          // Honour Retry-After, but not past 1 s here: the drill measures how soon sends are taken again.
          await sleep(Math.min(retryAfter, 1) * 1000);
        }
      }
    };
    const producers = Array.from({ length: PRODUCERS }, (_, p) => producer(p));

    /** When the first send after `since` was taken. */
    const firstTakenAfter = async (since: number): Promise<number> => {
      const deadline = Date.now() + 30_000;
      for (;;) {
        const taken = answers.find((a) => a.at >= since && (a.status === 202 || a.status === 200));
        if (taken) {
          const ms = taken.at + taken.ms - since;
          // What the sends got meanwhile ([start, took, status]), to tell a slow return from a refusal.
          if (ms > BACK_WITHIN_MS) console.log(`[faults] before the first send taken: ${JSON.stringify(answers.filter((a) => a.at >= since && a.at <= taken.at).map((a) => [a.at - since, a.ms, a.status]))}`);
          return ms;
        }
        if (Date.now() > deadline) return Number.POSITIVE_INFINITY;
        await sleep(100);
      }
    };
    const backAfter: Record<string, number> = {};

    await sleep(8_000);
    for (const round of [1, 2]) {
      process.kill(stack.dependencies.postgresPid()!, 'SIGKILL');
      await sleep(5_000);
      await stack.dependencies.restartPostgres();
      const back = Date.now();
      backAfter[`postgres restart ${round}`] = await firstTakenAfter(back);
      await sleep(6_000);
    }

    process.kill(stack.dependencies.seaweedPid()!, 'SIGKILL');
    await sleep(5_000);
    await stack.dependencies.restartSeaweed();
    backAfter['store restart'] = await firstTakenAfter(Date.now());
    await sleep(6_000);

    // Frozen, not gone: connections stay open and nothing answers on them.
    const postmaster = stack.dependencies.postgresPid()!;
    const frozen = [postmaster, ...childrenOf(postmaster)];
    for (const pid of frozen) process.kill(pid, 'SIGSTOP');
    await sleep(2 * DB_TIMEOUT_MS + 2_000);
    for (const pid of frozen) process.kill(pid, 'SIGCONT');
    backAfter['postgres thawed'] = await firstTakenAfter(Date.now());
    await sleep(5_000);

    stopping = true;
    await Promise.all(producers);

    // Every process of the stack is the one it started with, alive; none was restarted.
    expect(stack.pid('api')).toBe(pids.api);
    expect(stack.pid('roller')).toBe(pids.roller);
    for (const pid of Object.values(pids)) expect(isAlive(pid)).toBe(true);
    expect(said.filter((line) => / exited \(/.test(line) && !line.startsWith('seaweedfs'))).toEqual([]);

    const statuses = new Map<number, number>();
    for (const a of answers) statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
    const slowest = Math.max(...answers.map((a) => a.ms));
    console.log(
      `[faults] ${answers.length} requests, ${accepted.size} batches taken; statuses ${JSON.stringify(Object.fromEntries(statuses))}; ` +
        `slowest answer ${slowest} ms; first send taken after: ${Object.entries(backAfter).map(([k, v]) => `${k} ${v} ms`).join(', ')}`,
    );
    expect([...statuses.keys()].filter((s) => ![200, 202, 409, 429, 503].includes(s)), 'only 2xx, 409 batch_in_progress, 429 and 503').toEqual([]);
    expect(statuses.get(503) ?? 0, 'the faults were seen').toBeGreaterThan(0);
    expect(slowest).toBeLessThanOrEqual(REQUEST_BOUND_MS);
    for (const [what, ms] of Object.entries(backAfter)) expect(ms, what).toBeLessThanOrEqual(BACK_WITHIN_MS);

    // The roller drains the backlog; the table holds every accepted batch's rows once.
    const deadline = Date.now() + 180_000;
    for (;;) {
      const res = await fetch(`${api}/v1/sinks/${sink.id}`, { headers: admin });
      const got = (await res.json()) as { lag: { batches_waiting: number } };
      if (res.status === 200 && got.lag.batches_waiting === 0) break;
      if (Date.now() > deadline) throw new Error(`the backlog did not drain: ${JSON.stringify(got.lag)}`);
      await sleep(2_000);
    }
    const rows = await pyicebergRows(namespace, 'events', stack.env, ['p', 'seq', 'i']);
    const keys = new Set(rows.map((r) => `${r.p}-${r.seq}-${r.i}`));
    expect(keys.size, 'no row twice').toBe(rows.length);
    const batches = new Set(rows.map((r) => `p${r.p}-${r.seq}`));
    expect([...batches].filter((id) => !accepted.has(id)), 'no row of a batch that was never accepted').toEqual([]);
    expect(rows.length, 'every accepted row').toBe(accepted.size * ROWS_PER_BATCH);
  }, 600_000);
});
