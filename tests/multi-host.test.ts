/**
 * Several hosts on one machine (issue 35): two APIs and a roller, each in a network namespace of
 * its own with its own address, the stores reached over the bridge (the stack's Postgres, S3 and
 * catalog, forwarded from the root namespace's bridge address). The warehouse is registered at
 * 127.0.0.1, as a one-machine stack does, which no other host can reach: the APIs answer 503
 * catalog_unavailable until a PATCH moves it to the bridge address. Producers send through both
 * APIs (replays and conflicts across them); the roller's link is cut mid-roll and healed; the sink
 * catches up within a minute of the heal; every row is in the table once. Needs root (ip netns).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, openSync, readFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createDatabase, dropDatabase, migrate } from '@tablemere/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootstrap } from '../apps/api/src/bootstrap.ts';
import { pyicebergRows } from '../apps/roller/test/support/readers.ts';
import { stopChild } from '../scripts/stack/process.ts';
import { dropNamespaces, repoRoot, stackCatalog, stackEnv, stackWarehouse } from './support/stack.ts';

const PREFIX = `mh${process.pid % 1000}`;
const SUBNET = `10.253.${process.pid % 250}`;
const ROOT = `${SUBNET}.1`;
const HOSTS = { api1: `${SUBNET}.31`, api2: `${SUBNET}.32`, roller: `${SUBNET}.40` };
const hostsScript = path.join(repoRoot, 'scripts', 'netns', 'hosts.sh');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Listens on the bridge address and forwards to the same port on the loopback: the stores as a host of the network. */
async function forward(port: number): Promise<net.Server> {
  const server = net.createServer((client) => {
    const store = net.connect(port, '127.0.0.1');
    client.pipe(store).pipe(client);
    client.on('error', () => store.destroy());
    store.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, ROOT, resolve));
  return server;
}

/** A process in a namespace, its output in `log`. */
function inNamespace(host: keyof typeof HOSTS, entry: string, env: Record<string, string>, log: string): ChildProcess {
  const out = openSync(log, 'a');
  return spawn('ip', ['netns', 'exec', `${PREFIX}-${host}`, process.execPath, '--import', 'tsx', entry], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', out, out],
  });
}

async function until(what: string, check: () => Promise<boolean>, ms: number): Promise<number> {
  const started = Date.now();
  while (!(await check().catch(() => false))) {
    if (Date.now() - started > ms) throw new Error(`timed out waiting for ${what}`);
    await sleep(500);
  }
  return Date.now() - started;
}

describe('two APIs and a roller on hosts of their own', () => {
  const stack = stackEnv();
  const ports = { pg: Number(new URL(stack.DATABASE_URL!).port), s3: Number(new URL(stack.AWS_ENDPOINT_URL!).port), catalog: Number(new URL(stack.ICEBERG_REST_URI!).port) };
  const database = new URL(stack.DATABASE_URL!);
  database.pathname = `/multihost_${randomBytes(4).toString('hex')}`;
  const namespace = `multihost_${randomBytes(3).toString('hex')}`;
  const logs = mkdtempSync(path.join(tmpdir(), 'tablemere-multihost-'));
  const secrets = { secretKey: randomBytes(32).toString('base64'), bootstrap: randomBytes(24).toString('base64url') };
  const forwards: net.Server[] = [];
  const processes: ChildProcess[] = [];
  let adminKey: string;

  beforeAll(async () => {
    execFileSync('bash', [hostsScript, 'up', PREFIX, SUBNET], { stdio: 'pipe' });
    for (const port of Object.values(ports)) forwards.push(await forward(port));
    await createDatabase(database.toString());
    await migrate(database.toString());
    // As a one-machine stack registers it: addresses only the root namespace can reach.
    const boot = await bootstrap(database.toString(), { secretKey: secrets.secretKey, warehouse: stackWarehouse(stack) });
    adminKey = boot.adminKey!;
    const overBridge = (url: string) => url.replace('127.0.0.1', ROOT);
    const common = {
      DATABASE_URL: overBridge(database.toString()),
      TABLEMERE_SECRET_KEY: secrets.secretKey,
      TABLEMERE_BOOTSTRAP_SECRET: secrets.bootstrap,
      AWS_ENDPOINT_URL: overBridge(stack.AWS_ENDPOINT_URL!),
      AWS_REGION: stack.AWS_REGION!,
      AWS_ACCESS_KEY_ID: stack.AWS_ACCESS_KEY_ID!,
      AWS_SECRET_ACCESS_KEY: stack.AWS_SECRET_ACCESS_KEY!,
      TABLEMERE_INTAKE_BUCKET: stack.TABLEMERE_INTAKE_BUCKET!,
    };
    for (const host of ['api1', 'api2'] as const) {
      processes.push(
        inNamespace(host, 'apps/api/src/start.ts', {
          ...common,
          TABLEMERE_API_HOST: HOSTS[host],
          TABLEMERE_PUBLIC_URL: `http://${HOSTS.api1}:8787`,
          TABLEMERE_INTERNAL_HOST: HOSTS[host],
        }, path.join(logs, `${host}.log`)),
      );
    }
    processes.push(
      inNamespace('roller', 'apps/roller/src/main.ts', {
        ...common,
        TABLEMERE_INTERNAL_URL: `http://${HOSTS.api2}:8789`,
        TABLEMERE_ROLLER_TICK_SECONDS: '1',
        TABLEMERE_ROLLER_HOST: HOSTS.roller,
        TABLEMERE_ROLLER_LEASE_SECONDS: '20',
      }, path.join(logs, 'roller.log')),
    );
    for (const host of ['api1', 'api2'] as const) {
      await until(`${host} to be ready`, async () => (await fetch(`http://${HOSTS[host]}:8787/readyz`)).ok, 60_000);
    }
  }, 180_000);

  afterAll(async () => {
    for (const child of processes) await stopChild(child, 5_000);
    for (const server of forwards) server.close();
    execFileSync('bash', [hostsScript, 'down', PREFIX], { stdio: 'pipe' });
    await dropNamespaces(await stackCatalog(stack), [namespace]).catch(() => undefined);
    await dropDatabase(database.toString());
  });

  it('moves a warehouse by PATCH, takes sends through both, heals a cut link and rolls every row once', async () => {
    const api = (host: 'api1' | 'api2') => `http://${HOSTS[host]}:8787`;
    const admin = { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' };
    const sinkBody = JSON.stringify({
      name: `${namespace}_in`,
      warehouse: 'garden',
      table: `${namespace}.events`,
      inactivity_seconds: 10,
      create_table: { columns: [{ name: 'api', type: 'string', required: true }, { name: 'seq', type: 'long', required: true }] },
    });

    // Registered at 127.0.0.1: no host but the root namespace reaches it.
    const unreachable = await fetch(`${api('api1')}/v1/sinks`, { method: 'POST', headers: admin, body: sinkBody });
    expect(unreachable.status).toBe(503);
    expect(((await unreachable.json()) as { error: { code: string } }).error.code).toBe('catalog_unavailable');
    const readiness = (await (await fetch(`${api('api1')}/readyz`)).json()) as { status: string; warehouses: Array<{ status: string }> };
    expect(readiness).toMatchObject({ status: 'ok', warehouses: [{ status: 'failed' }] });

    const moved = await fetch(`${api('api2')}/v1/warehouses/garden`, {
      method: 'PATCH',
      headers: admin,
      body: JSON.stringify({ rest_uri: stack.ICEBERG_REST_URI!.replace('127.0.0.1', ROOT), s3: { endpoint: stack.AWS_ENDPOINT_URL!.replace('127.0.0.1', ROOT) } }),
    });
    expect(moved.status, await moved.clone().text()).toBe(200);
    // Through api2, whose answers still name the one public URL (api1's here), not its own address.
    const created = await fetch(`${api('api2')}/v1/sinks`, { method: 'POST', headers: admin, body: sinkBody });
    expect(created.status, await created.clone().text()).toBe(201);
    const sink = (await created.json()) as { id: string; send_key: string; ingest_url: string };
    expect(sink.ingest_url).toBe(`${api('api1')}/v1/sinks/${sink.id}`);

    const send = (host: 'api1' | 'api2', id: string, rows: unknown[]) =>
      fetch(`${api(host)}/v1/sinks/${sink.id}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${sink.send_key}`, 'idempotency-key': id, 'content-type': 'application/json' },
        body: JSON.stringify(rows),
      });
    // Across the two APIs: a replay through the other is a replay, another body a conflict.
    expect((await send('api1', 'first', [{ api: 'api1', seq: -1 }])).status).toBe(202);
    expect((await send('api2', 'first', [{ api: 'api1', seq: -1 }])).status).toBe(200);
    expect((await send('api2', 'first', [{ api: 'api2', seq: -1 }])).status).toBe(409);

    // Batches through both APIs, while the roller's link is cut for 20 s in the middle.
    const accepted = new Set<string>(['first']);
    let sending = true;
    const producer = async (host: 'api1' | 'api2') => {
      for (let seq = 0; sending; seq++) {
        const id = `${host}-${seq}`;
        const rows = Array.from({ length: 50 }, (_, i) => ({ api: host, seq: seq * 100 + i }));
        for (;;) {
          const status = await send(host, id, rows).then((r) => r.status, () => 0);
          if (status === 202 || status === 200) break;
          await sleep(500);
        }
        accepted.add(id);
        await sleep(20);
      }
    };
    const producers = [producer('api1'), producer('api2')];
    await until('a first roll', async () => {
      const got = (await (await fetch(`${api('api1')}/v1/sinks/${sink.id}`, { headers: admin })).json()) as { last_roll: unknown };
      return got.last_roll !== null;
    }, 60_000);
    // Cut in the middle of a roll: the roller holds a sink (its /healthz says so), rolling the backlog.
    await until('a roll in flight', async () => ((await (await fetch(`http://${HOSTS.roller}:8788/healthz`)).json()) as { in_flight: number }).in_flight > 0, 60_000);
    const link = `${PREFIX}vroller`;
    execFileSync('ip', ['link', 'set', link, 'down']);
    await sleep(20_000);
    execFileSync('ip', ['link', 'set', link, 'up']);
    const healedAt = Date.now();
    await sleep(3_000);
    sending = false;
    await Promise.all(producers);

    const caughtUp = await until('the backlog to drain after the heal', async () => {
      const got = (await (await fetch(`${api('api2')}/v1/sinks/${sink.id}`, { headers: admin })).json()) as { lag: { batches_waiting: number } };
      return got.lag.batches_waiting === 0;
    }, 120_000);
    console.log(`[multi-host] ${accepted.size} batches through two APIs; the sink caught up ${((Date.now() - healedAt) / 1000).toFixed(1)} s after the heal (${(caughtUp / 1000).toFixed(1)} s after the last send)`);
    expect(Date.now() - healedAt).toBeLessThan(60_000 + 3_000 + 10_000);

    // The cut failed a roll (not only a tick), and the failure was counted once the link was back.
    const rollerLog = readFileSync(path.join(logs, 'roller.log'), 'utf8');
    expect(rollerLog).toMatch(/"msg":"roll failed: /);
    const status = (await (await fetch(`${api('api1')}/v1/status`, { headers: admin })).json()) as { sinks: Array<{ id: string; last_day: { failed_rolls: number } }> };
    expect(status.sinks.find((s) => s.id === sink.id)?.last_day.failed_rolls).toBeGreaterThan(0);

    const rows = await pyicebergRows(namespace, 'events', stack, ['api', 'seq']);
    const keys = rows.map((r) => `${r.api}:${r.seq}`);
    expect(new Set(keys).size, 'no row twice').toBe(rows.length);
    expect(rows.length).toBe(1 + (accepted.size - 1) * 50);
  }, 300_000);
});
