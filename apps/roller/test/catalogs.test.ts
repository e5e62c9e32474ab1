import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Warehouse } from '@tablemere/contracts';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { FaultyProxy } from '../../../packages/iceberg/test/faulty-proxy.ts';
import { dropNamespaces, stackCatalog, stackEnv } from '../../../tests/support/stack.ts';
import { runCli as runTablemere } from '../../cli/test/support/run-cli.ts';
import { createSink, createTable, getSink, send } from './support/api.ts';
import { expireLease, intakeBatches, readBoth, rejectsOf } from './support/expect.ts';
import { otherWriter, overwriteTable, pyicebergRows } from './support/readers.ts';
import { runCli, summaries } from './support/roller.ts';
import { startProxiedStack } from './support/proxied-stack.ts';
import { startTestStack, suffix, type TestStack } from './support/stack.ts';

/**
 * The catalog matrix: the same sink, end to end, on SeaweedFS's catalog, Iceberg's reference
 * REST catalog (1.11, JDBC on SQLite) and Nessie (0.99, which serves only the head snapshot).
 * The JVM catalogs are started once per run by tests/global-setup.ts. The API and the roller
 * reach each catalog through a proxy that can let another writer commit just before theirs.
 */
const CATALOGS = ['seaweedfs', 'reference', 'nessie'] as const;

function catalogEnv(name: (typeof CATALOGS)[number]): Record<string, string> {
  const env = stackEnv();
  if (name === 'seaweedfs') return env;
  const endpoint = inject('jvmCatalogs')[name];
  if (!endpoint) throw new Error(`the ${name} catalog was not started for this run: tests/global-setup.ts starts it when the run includes apps/roller/test/catalogs.test.ts`);
  return { ...env, ICEBERG_REST_URI: endpoint.uri, ICEBERG_WAREHOUSE: endpoint.warehouse, ICEBERG_REST_AUTH: endpoint.auth };
}

const columns = [
  { name: 'x', type: 'long', required: true },
  { name: 'who', type: 'string' },
];
const sinkRows = (rows: Array<Record<string, unknown>>) => rows.filter((r) => r.who !== 'other writer').map((r) => [Number(r.x), r.who]);

describe.each(CATALOGS)('a sink on the %s catalog', (name) => {
  let stack: TestStack;
  let proxy: FaultyProxy;
  const namespaces: string[] = [];

  beforeAll(async () => {
    ({ stack, proxy } = await startProxiedStack(catalogEnv(name)));
  });

  afterAll(async () => {
    await stack?.dropNamespaces(namespaces);
    await stack?.stop();
    await proxy?.close();
  });

  async function sinkOnNewTable() {
    const ns = `cat_${name}_${suffix()}`;
    namespaces.push(ns);
    await createTable(stack, ns, 'events', columns);
    return { ns, sink: await createSink(stack, `cat_${suffix()}`, `${ns}.events`) };
  }

  async function roll(sinkId: string, env: Record<string, string> = {}) {
    const run = await runCli(['roll', sinkId], stack.rollerEnv(env));
    return { run, summary: summaries(run)[0] };
  }

  /** PyIceberg commits one row of its own to the table. */
  async function otherWriterCommits(ns: string): Promise<void> {
    const { appends } = await otherWriter(ns, 'events', path.join(tmpdir(), `never-${suffix()}`), 0, { most: 1, env: stack.env }).done;
    expect(appends).toBe(1);
  }

  it('creates the table through the API, rolls sent batches and sets aside the rows that do not fit', async () => {
    const { ns, sink } = await sinkOnNewTable();
    await send(stack, sink, 'b-1', [{ x: 1, who: 'north' }, { x: 2 }, { x: 'three' }]);
    await send(stack, sink, 'b-2', [{ x: 4, who: 'south', colour: 'red' }, { x: 5, who: 'west' }]);
    const { run, summary } = await roll(sink.id);
    expect(run.code, run.stderr).toBe(0);
    expect(summary).toMatchObject({ outcome: 'committed', batches: 2, rows: 3, rejected_rows: 2, reasons: { type_mismatch: 1, unknown_field: 1 } });

    const rows = await readBoth(stack, ns, 'events');
    expect(rows.map((r) => [r.x, r.who])).toEqual([
      [1, 'north'],
      [2, null],
      [5, 'west'],
    ]);
    expect(rows.every((r) => typeof r.__ingest_ts === 'string')).toBe(true);
    expect(await rejectsOf(stack, sink.id, 'b-1')).toEqual([expect.objectContaining({ row: { x: 'three' }, reason: 'type_mismatch', field: 'x' })]);
    expect(await rejectsOf(stack, sink.id, 'b-2')).toEqual([expect.objectContaining({ row: { x: 4, who: 'south', colour: 'red' }, reason: 'unknown_field' })]);
    expect(await intakeBatches(stack, sink.id)).toEqual([]);
  });

  it('loses a commit race to another writer (409), reloads and lands every row once', async () => {
    const { ns, sink } = await sinkOnNewTable();
    await send(stack, sink, 'b-1', [{ x: 1, who: 'first' }]);
    expect((await roll(sink.id)).summary).toMatchObject({ outcome: 'committed', attempts: 1 });

    await send(stack, sink, 'b-2', [{ x: 2, who: 'second' }, { x: 3, who: 'second' }]);
    proxy.beforeNextCommit(() => otherWriterCommits(ns));
    const { run, summary } = await roll(sink.id);
    expect(run.code, run.stderr).toBe(0);
    expect(summary).toMatchObject({ outcome: 'committed', batches: 1, rows: 2, attempts: 2 });

    const rows = await readBoth(stack, ns, 'events');
    expect(sinkRows(rows)).toEqual([
      [1, 'first'],
      [2, 'second'],
      [3, 'second'],
    ]);
    expect(rows.filter((r) => r.who === 'other writer')).toHaveLength(1);
    expect((await getSink(stack, sink.id)).lag.batches_waiting).toBe(0);
  });

  it('settles a roll killed right after its commit, with another writer\'s commit on top, without rolling it twice', async () => {
    const { ns, sink } = await sinkOnNewTable();
    await send(stack, sink, 'b-1', [{ x: 1, who: 'first' }]);
    expect((await roll(sink.id)).summary).toMatchObject({ outcome: 'committed' });

    await send(stack, sink, 'b-2', [{ x: 2, who: 'second' }]);
    const crashed = await roll(sink.id, { TABLEMERE_ROLLER_CRASH_AT: 'after-commit' });
    expect(crashed.run.signal, crashed.run.stderr).toBe('SIGKILL');
    await expireLease(stack, sink.id);
    // On Nessie the head now has no parent: the crashed roll's snapshot is out of sight.
    await otherWriterCommits(ns);

    const { run, summary } = await roll(sink.id);
    expect(run.code, run.stdout).toBe(0);
    expect(summary).toMatchObject({ settled: 1 });
    const rows = await readBoth(stack, ns, 'events');
    expect(sinkRows(rows)).toEqual([
      [1, 'first'],
      [2, 'second'],
    ]);
    expect(await intakeBatches(stack, sink.id)).toEqual([]);
  });

  it('stops, without committing twice, when nothing the catalog keeps shows whether a killed roll landed', async () => {
    const { ns, sink } = await sinkOnNewTable();
    await send(stack, sink, 'b-1', [{ x: 1, who: 'first' }]);
    expect((await roll(sink.id)).summary).toMatchObject({ outcome: 'committed' });
    await send(stack, sink, 'b-2', [{ x: 2, who: 'second' }]);
    expect((await roll(sink.id, { TABLEMERE_ROLLER_CRASH_AT: 'after-commit' })).run.signal).toBe('SIGKILL');
    await expireLease(stack, sink.id);
    // The owner replaces every row: no live entry of the head's manifests comes from the killed roll.
    await overwriteTable(ns, 'events', stack.env);

    const { run, summary } = await roll(sink.id);
    if (name === 'nessie') {
      // The head alone, without parents or metadata-log: the roll stops, the batch stays waiting.
      expect(run.code).toBe(1);
      expect(summary).toMatchObject({ status: 'failed', reason: 'intent_unresolved' });
      expect(await intakeBatches(stack, sink.id)).toHaveLength(1);
      expect((await getSink(stack, sink.id)).lag.batches_waiting).toBe(1);
    } else {
      // The overwrite's parent chain still shows the killed roll's snapshot on main.
      expect(run.code, run.stdout).toBe(0);
      expect(summary).toMatchObject({ settled: 1 });
      expect(await intakeBatches(stack, sink.id)).toEqual([]);
    }
    expect((await readBoth(stack, ns, 'events')).map((r) => [r.x, r.who])).toEqual([[-1, 'overwrite']]);
  });
});

/**
 * An owner registering their own catalog with the CLI alone: the real `tablemere` binary adds the
 * reference catalog as a second warehouse beside the stack's, shows it, creates a sink (and its
 * table) on it and sends rows; the roller rolls them and PyIceberg reads them from that catalog.
 */
describe('tablemere warehouse add: the reference catalog as a second warehouse', () => {
  let stack: TestStack;
  const ns = `cat_cli_${suffix()}`;
  const work = mkdtempSync(path.join(tmpdir(), 'tablemere-catalogs-cli-'));

  beforeAll(async () => {
    stack = await startTestStack();
  });

  afterAll(async () => {
    await dropNamespaces(await stackCatalog(catalogEnv('reference')), [ns]);
    await stack?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  /** The real CLI as the project's admin, with `env` added. */
  async function tablemere(args: string[], env: Record<string, string> = {}, input?: string) {
    const run = await runTablemere(args, { env: { TABLEMERE_API_URL: stack.apiUrl, TABLEMERE_API_KEY: stack.adminKey, ...env }, ...(input === undefined ? {} : { input }) });
    expect({ args: args.slice(0, 2), code: run.code, stderr: run.stderr }).toEqual({ args: args.slice(0, 2), code: 0, stderr: '' });
    return run.stdout;
  }

  it('registers it, gets it, creates a sink on it, and the rows sent roll into it for PyIceberg', async () => {
    const reference = catalogEnv('reference');
    const added = await tablemere(
      [
        'warehouse', 'add', 'reference',
        '--catalog-uri', reference.ICEBERG_REST_URI!, '--warehouse', reference.ICEBERG_WAREHOUSE!,
        '--auth', 'oauth2', '--client-id', reference.AWS_ACCESS_KEY_ID!,
        '--s3-endpoint', reference.AWS_ENDPOINT_URL!, '--region', reference.AWS_REGION!, '--access-key-id', reference.AWS_ACCESS_KEY_ID!,
      ],
      { TABLEMERE_CATALOG_CLIENT_SECRET: reference.AWS_SECRET_ACCESS_KEY!, TABLEMERE_S3_SECRET_ACCESS_KEY: reference.AWS_SECRET_ACCESS_KEY! },
    );
    expect(added).toMatch(/^registered warehouse reference \(/);
    expect(added).not.toContain(reference.AWS_SECRET_ACCESS_KEY!);

    const got = Warehouse.parse(JSON.parse(await tablemere(['warehouse', 'get', 'reference', '--json'])));
    expect(got).toMatchObject({ name: 'reference', rest_uri: reference.ICEBERG_REST_URI, warehouse: reference.ICEBERG_WAREHOUSE, auth: { type: 'oauth2' } });
    expect((await tablemere(['warehouse', 'list'])).trimEnd().split('\n').slice(1).map((line) => line.split(/\s+/)[0])).toEqual([stack.warehouse, 'reference']);

    const keyFile = path.join(work, 'sink.json');
    const created = await tablemere(['sink', 'create', 'reference', '--table', `${ns}.events`, '--name', `ref_${suffix()}`, '--column', 'x:long:required', '--column', 'who:string', '--save', keyFile]);
    expect(created).toContain(`for ${ns}.events in warehouse reference\n`);
    const { sink_id: sinkId, send_key: sendKey } = JSON.parse(readFileSync(keyFile, 'utf8')) as { sink_id: string; send_key: string };

    // The key file's ingest URL names the test API's public URL (no port): the key and the API URL instead.
    const sent = await tablemere(['sink', 'send', '-', '--batch-id', 'b-1'], { TABLEMERE_SEND_KEY: sendKey }, '{"x": 1, "who": "north"}\n{"x": 2}\n');
    expect(sent).toMatch(/2 accepted/);

    const run = await runCli(['roll', sinkId], stack.rollerEnv());
    expect(run.code, run.stderr).toBe(0);
    expect(summaries(run)[0]).toMatchObject({ outcome: 'committed', batches: 1, rows: 2 });

    const rows = await pyicebergRows(ns, 'events', reference);
    expect(rows.map((r) => [Number(r.x), r.who]).sort()).toEqual([
      [1, 'north'],
      [2, null],
    ]);
    // Not in the stack's own catalog: the sink wrote where the CLI registered.
    expect(await (await stackCatalog(stackEnv())).listTables(ns).catch(() => [])).toEqual([]);
  });
});
