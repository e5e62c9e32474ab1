import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Warehouse, WarehouseList } from '@tablemere/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stackEnv } from '../../../tests/support/stack.ts';
import { startTestApi, type TestApi } from './support/api.ts';
import { dropNamespace } from './support/catalog.ts';
import { type CliRun, runCli } from './support/run-cli.ts';

/** `tablemere warehouse add|list|get|update` against the real API, registering the stack's own catalog again under other names. */

const work = mkdtempSync(path.join(tmpdir(), 'tablemere-cli-warehouse-'));
const namespace = `cli_wh_${randomBytes(4).toString('hex')}`;
const stack = stackEnv();
let api: TestApi;

const tablemere = (args: string[], env: Record<string, string> = {}, input?: string) =>
  runCli(args, { env: { TABLEMERE_API_URL: api.url, TABLEMERE_API_KEY: api.adminKey, ...env }, ...(input === undefined ? {} : { input }) });

function ok(result: CliRun): CliRun {
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
  return result;
}

/** A failure: exactly one line on stderr, nothing on stdout, this exit code. */
function failed(result: CliRun, code: number, line: RegExp): void {
  expect({ code: result.code, stdout: result.stdout }).toEqual({ code, stdout: '' });
  expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
  expect(result.stderr.trimEnd()).toMatch(line);
}

/** The stack's catalog and store, as `warehouse add` flags (secrets apart). */
const where = (catalogUri = stack.ICEBERG_REST_URI!) => [
  '--catalog-uri', catalogUri,
  '--warehouse', stack.ICEBERG_WAREHOUSE!,
  '--s3-endpoint', stack.AWS_ENDPOINT_URL!,
  '--region', stack.AWS_REGION!,
];

/** Every secret the test handles: none may ever be printed. */
const secrets = [stack.AWS_SECRET_ACCESS_KEY!];
const printed: string[] = [];
const seen = (result: CliRun): CliRun => {
  printed.push(result.stdout, result.stderr);
  return result;
};

/** A real token from the catalog's OAuth2 endpoint, for --auth bearer. */
async function catalogToken(): Promise<string> {
  const res = await fetch(`${stack.ICEBERG_REST_URI}/v1/oauth/tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: stack.AWS_ACCESS_KEY_ID!, client_secret: stack.AWS_SECRET_ACCESS_KEY!, scope: 'catalog' }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { access_token: string }).access_token;
}

beforeAll(async () => {
  api = await startTestApi();
  secrets.push(api.adminKey);
});
afterAll(async () => {
  await dropNamespace(namespace);
  await api?.stop();
  rmSync(work, { recursive: true, force: true });
});

describe('tablemere warehouse add', () => {
  it('registers an oauth2 catalog, secrets from the environment and a file, and prints it without them', async () => {
    const s3Secret = path.join(work, 's3-secret');
    writeFileSync(s3Secret, `${stack.AWS_SECRET_ACCESS_KEY}\n`, { mode: 0o600 });
    const result = ok(seen(await tablemere(
      ['warehouse', 'add', 'lake', ...where(), '--auth', 'oauth2', '--client-id', stack.AWS_ACCESS_KEY_ID!, '--access-key-id', stack.AWS_ACCESS_KEY_ID!, '--secret-access-key-file', s3Secret],
      { TABLEMERE_CATALOG_CLIENT_SECRET: stack.AWS_SECRET_ACCESS_KEY! },
    )));
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^registered warehouse lake \([0-9a-f-]{36}\)$/);
    expect(lines.slice(1).map((line) => line.trim().split(/\s{2,}/))).toEqual([
      ['catalog URI', stack.ICEBERG_REST_URI],
      ['warehouse', stack.ICEBERG_WAREHOUSE],
      ['catalog auth', 'oauth2'],
      ['S3 endpoint', stack.AWS_ENDPOINT_URL],
      ['S3 region', stack.AWS_REGION],
      ['sink bucket', "the platform's intake bucket"],
      ['created', expect.stringMatching(/^\d{4}-\d\d-\d\dT/)],
    ]);
  });

  it('takes a bearer token from standard input, and answers the API\'s JSON with --json', async () => {
    const token = await catalogToken();
    secrets.push(token);
    const result = ok(seen(await tablemere(['warehouse', 'add', 'pond', ...where(), '--auth', 'bearer', '--token-file', '-', '--json'], {}, `${token}\n`)));
    const body = JSON.parse(result.stdout);
    expect(Warehouse.parse(body)).toMatchObject({ name: 'pond', auth: { type: 'bearer' }, s3: { sink_bucket: null } });
    expect(Object.keys(body.auth)).toEqual(['type']);
  });

  it('refuses, before calling the API, a missing secret, a secret flag, another type\'s flags and two secrets on standard input', async () => {
    failed(seen(await tablemere(['warehouse', 'add', 'x', ...where(), '--auth', 'oauth2', '--client-id', 'c'])), 2,
      /^error: --auth oauth2 needs its secret: set \$TABLEMERE_CATALOG_CLIENT_SECRET or pass --client-secret-file FILE/);
    failed(seen(await tablemere(['warehouse', 'add', 'x', ...where(), '--auth', 'oauth2', '--client-id', 'c', '--client-secret', 's'])), 2, /^error: unknown option '--client-secret'/);
    failed(seen(await tablemere(['warehouse', 'add', 'x', ...where(), '--auth', 'none', '--client-id', 'c'])), 2, /^error: --client-id is for --auth oauth2, not --auth none$/);
    failed(seen(await tablemere(['warehouse', 'add', 'x', ...where(), '--auth', 'basic'])), 2, /^error: --auth 'basic': give one of oauth2, sigv4, bearer, none$/);
    failed(seen(await tablemere(['warehouse', 'add', 'x', ...where(), '--auth', 'none', '--access-key-id', 'k'])), 2,
      /^error: --access-key-id needs its secret: set \$TABLEMERE_S3_SECRET_ACCESS_KEY or pass --secret-access-key-file FILE$/);
    failed(seen(await tablemere(['warehouse', 'add', 'x', ...where(), '--auth', 'bearer', '--token-file', '-', '--access-key-id', 'k', '--secret-access-key-file', '-'], {}, 'a\n')), 2,
      /^error: --token-file and --secret-access-key-file: only one secret can come from standard input$/);
    failed(seen(await tablemere(['warehouse', 'add', 'x', ...where(), '--auth', 'bearer', '--token-file', path.join(work, 'absent')])), 2, /^error: --token-file .*absent: cannot read it \(ENOENT\)$/);
    failed(seen(await tablemere(['warehouse', 'add', 'Bad Name', ...where(), '--auth', 'none'])), 2, /^error: warehouse 'Bad Name': /);
    failed(seen(await tablemere(['warehouse', 'add', 'x', ...where('ftp://nowhere'), '--auth', 'none'])), 2, /^error: --catalog-uri: must be an http\(s\) URL$/);
    // None of these reached the API: nothing was registered.
    const listed = WarehouseList.parse(JSON.parse(ok(await tablemere(['warehouse', 'list', '--json'])).stdout));
    expect(listed.warehouses.map((w) => w.name)).not.toContain('x');
  });

  it('answers exit 1 with the API\'s code for a taken name', async () => {
    failed(seen(await tablemere(['warehouse', 'add', 'garden', ...where(), '--auth', 'none'])), 1, /^error: warehouse_exists: /);
  });
});

describe('tablemere warehouse list and get', () => {
  it('lists the project\'s warehouses, one per line after a header, and the API answer with --json', async () => {
    const human = ok(seen(await tablemere(['warehouse', 'list'])));
    const lines = human.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^NAME\s+CATALOG URI\s+WAREHOUSE\s+AUTH\s+S3 ENDPOINT\s+REGION$/);
    expect(lines.slice(1).map((line) => line.split(/\s+/).slice(0, 4))).toEqual([
      ['garden', stack.ICEBERG_REST_URI, stack.ICEBERG_WAREHOUSE, 'oauth2'],
      ['lake', stack.ICEBERG_REST_URI, stack.ICEBERG_WAREHOUSE, 'oauth2'],
      ['pond', stack.ICEBERG_REST_URI, stack.ICEBERG_WAREHOUSE, 'bearer'],
    ]);
    const json = WarehouseList.parse(JSON.parse(ok(seen(await tablemere(['warehouse', 'list', '--json']))).stdout));
    expect(json.warehouses.map((w) => w.name)).toEqual(['garden', 'lake', 'pond']);
  });

  it('gets one warehouse by name, human and --json, and exit 1 warehouse_not_found for another', async () => {
    const human = ok(seen(await tablemere(['warehouse', 'get', 'pond'])));
    expect(human.stdout).toMatch(/^warehouse pond \([0-9a-f-]{36}\)\n {2}catalog URI {3}/);
    expect(human.stdout).toContain('  catalog auth  bearer\n');
    const json = Warehouse.parse(JSON.parse(ok(seen(await tablemere(['warehouse', 'get', 'pond', '--json']))).stdout));
    const listed = WarehouseList.parse(JSON.parse(ok(await tablemere(['warehouse', 'list', '--json'])).stdout)).warehouses;
    expect(json).toEqual(listed.find((w) => w.name === 'pond'));
    failed(seen(await tablemere(['warehouse', 'get', 'nowhere'])), 1, /^error: warehouse_not_found: /);
    failed(seen(await tablemere(['warehouse', 'get', 'Bad Name'])), 2, /^error: warehouse 'Bad Name': /);
  });

  it('update moves a warehouse: only what is given changes, a new auth whole, refusals before the API', async () => {
    const moved = ok(seen(await tablemere(['warehouse', 'update', 'pond', '--catalog-uri', 'http://10.0.3.5:8181', '--s3-endpoint', 'http://10.0.3.5:8333'])));
    expect(moved.stdout).toMatch(/^updated warehouse pond \([0-9a-f-]{36}\)\n/);
    const after = Warehouse.parse(JSON.parse(ok(await tablemere(['warehouse', 'get', 'pond', '--json'])).stdout));
    expect(after).toMatchObject({ rest_uri: 'http://10.0.3.5:8181', warehouse: stack.ICEBERG_WAREHOUSE, auth: { type: 'bearer' }, s3: { endpoint: 'http://10.0.3.5:8333', region: stack.AWS_REGION } });
    const back = JSON.parse(ok(seen(await tablemere(
      ['warehouse', 'update', 'pond', '--catalog-uri', stack.ICEBERG_REST_URI!, '--s3-endpoint', stack.AWS_ENDPOINT_URL!, '--auth', 'oauth2', '--client-id', stack.AWS_ACCESS_KEY_ID!, '--client-secret-file', '-', '--json'],
      {},
      `${stack.AWS_SECRET_ACCESS_KEY}\n`,
    ))).stdout);
    expect(Warehouse.parse(back)).toMatchObject({ rest_uri: stack.ICEBERG_REST_URI, auth: { type: 'oauth2' } });
    // The catalog answers with the new auth: a table is made and listed through it again. (A table
    // of its own: the whole catalog, shared with every other test file, may have none just then.)
    ok(await tablemere(['table', 'create', 'pond', '--namespace', namespace, '--name', 'events', '--column', 'x:long']));
    expect(ok(await tablemere(['table', 'list', 'pond', '--namespace', namespace])).stdout.trim()).toBe(`${namespace}.events`);
    failed(seen(await tablemere(['warehouse', 'update', 'pond'])), 2, /^error: nothing to change: /);
    failed(seen(await tablemere(['warehouse', 'update', 'pond', '--client-id', 'c'])), 2, /^error: --client-id needs --auth: the catalog auth is replaced whole$/);
    failed(seen(await tablemere(['warehouse', 'update', 'pond', '--access-key-id', 'k'])), 2, /^error: --access-key-id needs its secret: /);
    failed(seen(await tablemere(['warehouse', 'update', 'nowhere', '--warehouse', 'w'])), 1, /^error: warehouse_not_found: /);
  });

  it('every command taking a warehouse calls it <warehouse>, and nothing printed a secret', async () => {
    for (const args of [['sink', 'create'], ['sink', 'list'], ['table', 'create'], ['table', 'list'], ['connect']]) {
      const help = ok(await tablemere([...args, '--help'])).stdout;
      expect(help.split('\n')[0], args.join(' ')).toMatch(/[<[]warehouse[>\]]/);
      expect(help, args.join(' ')).not.toMatch(/<catalog>|\[catalog\]/);
    }
    expect(printed.length).toBeGreaterThan(20);
    for (const text of printed) for (const secret of secrets) expect(text).not.toContain(secret);
  });
});
