import { query } from '@tablemere/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Maintenance, maintenanceTasks, type MaintenanceTask } from '../src/domain/maintenance.ts';
import { pruneRolls } from '../src/domain/rolls/intents.ts';
import { pruneUpkeeps } from '../src/domain/rolls/upkeep-report.ts';
import { SecretBox } from '../src/domain/secrets.ts';
import { insertSink, startInternalTestApi, type InternalTestApi } from './support/internal-harness.ts';

let api: InternalTestApi;

beforeAll(async () => {
  api = await startInternalTestApi();
});
afterAll(async () => {
  await api?.close();
});

describe('roll pruning', () => {
  it('deletes closed rolls older than 7 days and keeps open intents', async () => {
    const sinkId = await insertSink(api.pool, api);
    await query(
      api.pool,
      `INSERT INTO sink_rolls (sink_id, state, snapshot_id, batch_ids, lease_id, roller_id, created_at, closed_at) VALUES
         ($1, 'committed', '1', '{a}', gen_random_uuid(), 'r', now() - interval '9 days', now() - interval '8 days'),
         ($1, 'committed', '2', '{b}', gen_random_uuid(), 'r', now() - interval '9 days', now() - interval '6 days'),
         ($1, 'open', '3', '{c}', gen_random_uuid(), 'r', now() - interval '30 days', NULL)`,
      [sinkId],
    );
    expect(await pruneRolls(api.pool)).toBe(1);
    const left = await query<{ snapshot_id: string }>(api.pool, 'SELECT snapshot_id FROM sink_rolls WHERE sink_id = $1 ORDER BY snapshot_id', [sinkId]);
    expect(left.map((row) => row.snapshot_id)).toEqual(['2', '3']);
  });
});

describe('upkeep pruning', () => {
  it('deletes upkeep runs recorded more than 7 days ago; the sink keeps its last upkeep', async () => {
    const sinkId = await insertSink(api.pool, api);
    const lastRun = { at: '2026-11-20T10:00:00.000Z', outcome: 'nothing' };
    await query(api.pool, 'UPDATE sinks SET last_upkeep = $2 WHERE id = $1', [sinkId, JSON.stringify(lastRun)]);
    await query(
      api.pool,
      `INSERT INTO sink_upkeeps (sink_id, lease_id, roller_id, started_at, outcome, report, created_at) VALUES
         ($1, gen_random_uuid(), 'r', now() - interval '9 days', 'done', '{}', now() - interval '8 days'),
         ($1, gen_random_uuid(), 'r', now() - interval '6 days', 'nothing', '{}', now() - interval '6 days')`,
      [sinkId],
    );
    expect(await pruneUpkeeps(api.pool)).toBe(1);
    const left = await query<{ outcome: string }>(api.pool, 'SELECT outcome FROM sink_upkeeps WHERE sink_id = $1', [sinkId]);
    expect(left.map((row) => row.outcome)).toEqual(['nothing']);
    expect((await query<{ last_upkeep: unknown }>(api.pool, 'SELECT last_upkeep FROM sinks WHERE id = $1', [sinkId]))[0]!.last_upkeep).toEqual(lastRun);
  });
});

describe('the maintenance loop', () => {
  it('runs each task once per interval across processes, recording the outcome', async () => {
    const tasks = maintenanceTasks(api.pool, SecretBox.fromBase64(api.secretKey), api.app.log);
    expect(tasks.map((t) => t.name)).toEqual(['storage_sweep', 'ledger_prune', 'send_key_retire']);
    const one = new Maintenance({ pool: api.pool, logger: api.app.log, tasks, intervalSeconds: 3600 });
    const two = new Maintenance({ pool: api.pool, logger: api.app.log, tasks, intervalSeconds: 3600 });

    expect(await one.runDue()).toEqual(['storage_sweep', 'ledger_prune', 'send_key_retire']);
    // A second process (or a restart) within the interval runs nothing.
    expect(await two.runDue()).toEqual([]);
    expect(await one.runDue()).toEqual([]);

    const runs = await query<{ task: string; ok: boolean; details: any; finished_at: Date | null }>(api.pool, 'SELECT * FROM maintenance_runs ORDER BY task');
    expect(runs.map((r) => [r.task, r.ok])).toEqual([
      ['ledger_prune', true],
      ['send_key_retire', true],
      ['storage_sweep', true],
    ]);
    expect(runs.every((r) => r.finished_at !== null)).toBe(true);
    expect(runs.find((r) => r.task === 'storage_sweep')!.details).toMatchObject({ measured: 1, failed: [] });
    const sweeps = await query(api.pool, `SELECT 1 FROM storage_measurements WHERE trigger = 'sweep' AND warehouse_id = $1`, [api.warehouseId]);
    expect(sweeps).toHaveLength(1);

    // Once the interval has passed, whichever process comes first runs it again.
    await query(api.pool, `UPDATE maintenance_runs SET started_at = now() - interval '2 hours'`);
    expect(await two.runDue()).toEqual(['storage_sweep', 'ledger_prune', 'send_key_retire']);
  });

  it('records a failing task and goes on with the next', async () => {
    const failing: MaintenanceTask = {
      name: 'failing_task',
      run: async () => {
        throw new Error('store unreachable');
      },
    };
    const after: MaintenanceTask = { name: 'after_task', run: async () => ({ done: true }) };
    const maintenance = new Maintenance({ pool: api.pool, logger: api.app.log, tasks: [failing, after], intervalSeconds: 60 });
    expect(await maintenance.runDue()).toEqual(['failing_task', 'after_task']);
    const runs = await query<{ task: string; ok: boolean; details: any }>(api.pool, `SELECT task, ok, details FROM maintenance_runs WHERE task LIKE '%_task' ORDER BY task`);
    expect(runs).toEqual([
      { task: 'after_task', ok: true, details: { done: true } },
      { task: 'failing_task', ok: false, details: { error: 'store unreachable' } },
    ]);
  });

  it('ticks on its own once started, and stop() waits for the run in progress and aborts it', async () => {
    let signal: AbortSignal | undefined;
    let runs = 0;
    const slow: MaintenanceTask = {
      name: 'slow_task',
      run: async (given) => {
        runs += 1;
        signal = given;
        await new Promise<void>((resolve) => given.addEventListener('abort', () => resolve(), { once: true }));
        return { aborted: given.aborted };
      },
    };
    const maintenance = new Maintenance({ pool: api.pool, logger: api.app.log, tasks: [slow], intervalSeconds: 1, tickMs: 50 });
    maintenance.start();
    const deadline = Date.now() + 5_000;
    while (!signal && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(signal).toBeDefined();
    await maintenance.stop();
    expect(signal!.aborted).toBe(true);
    expect(runs).toBe(1);
    const [row] = await query<{ ok: boolean; details: any }>(api.pool, `SELECT ok, details FROM maintenance_runs WHERE task = 'slow_task'`);
    expect(row).toEqual({ ok: true, details: { aborted: true } });
  });
});
