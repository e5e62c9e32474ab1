import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Connection, CreatedTable, TableList } from '@tablemere/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot, stackEnv } from '../../../tests/support/stack.ts';
import { startTestApi, type TestApi } from './support/api.ts';
import { dropNamespace } from './support/catalog.ts';
import { freePort } from '../../../tests/support/ports.ts';
import { cliBin, type CliRun, outsideDir, runCli } from './support/run-cli.ts';

const python = path.join(repoRoot, '.venv', 'bin', 'python');
const enginesDir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'engines');
const run = promisify(execFile);

const namespace = `cli_${randomBytes(4).toString('hex')}`;
let api: TestApi;

beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.stop();
  await dropNamespace(namespace);
});

/** The environment a user of the test project has. */
const userEnv = (overrides: Record<string, string> = {}) => ({
  TABLEMERE_API_URL: api.url,
  TABLEMERE_API_KEY: api.adminKey,
  ...overrides,
});

const tablemere = (args: string[], env: Record<string, string> = userEnv()) => runCli(args, { env });

/** A failure: exactly one line on stderr, nothing on stdout, this exit code. */
function expectFailure(result: CliRun, code: number, line: RegExp): void {
  expect({ code: result.code, stdout: result.stdout }).toEqual({ code, stdout: '' });
  expect(result.stderr.endsWith('\n')).toBe(true);
  expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
  expect(result.stderr.trimEnd()).toMatch(line);
}

/** Where `tablemere connect` printed the snippet headed `header`, up to the next engine. */
function section(text: string, header: string): string {
  const start = text.indexOf(`\n${header}\n`);
  expect(start).toBeGreaterThan(0);
  const body = text.slice(start + header.length + 2);
  const end = body.search(/\n\n(# |-- )/);
  return end < 0 ? body : body.slice(0, end + 1);
}

async function engineCheck(script: string, snippet: string, table: string): Promise<unknown> {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'tablemere-cli-snippet-')), 'snippet');
  writeFileSync(file, snippet);
  const stack = stackEnv();
  const { stdout } = await run(python, [path.join(enginesDir, script), file, namespace, table], {
    // The credentials the snippets name, set the way their user would set them.
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      AWS_ACCESS_KEY_ID: stack.AWS_ACCESS_KEY_ID!,
      AWS_SECRET_ACCESS_KEY: stack.AWS_SECRET_ACCESS_KEY!,
      ICEBERG_CLIENT_ID: stack.AWS_ACCESS_KEY_ID!,
      ICEBERG_CLIENT_SECRET: stack.AWS_SECRET_ACCESS_KEY!,
    },
    timeout: 120_000,
  });
  return JSON.parse(stdout.trim().split('\n').at(-1)!);
}

describe('tablemere --version', () => {
  it("prints the release's version from the package, exit 0", async () => {
    const cliPackage = JSON.parse(readFileSync(path.join(repoRoot, 'apps', 'cli', 'package.json'), 'utf8')) as { version: string };
    const result = await tablemere(['--version']);
    expect(result).toMatchObject({ code: 0, stdout: `${cliPackage.version}\n`, stderr: '' });
  });
});

describe('tablemere table create', () => {
  it('creates a table and prints its columns with ids, types and required', async () => {
    const result = await tablemere([
      'table', 'create', api.warehouse,
      '--namespace', namespace, '--name', 'events',
      '--column', 'x:long:required', '--column', 'who:string',
    ]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(`created ${namespace}.events in warehouse ${api.warehouse} (Iceberg format v2)`);
    expect(lines[1]).toMatch(new RegExp(`^location s3://.+/events`));
    expect(lines[2]).toBe('columns:');
    expect(lines.slice(3).map((line) => line.trim().split(/\s+/))).toEqual([
      ['1', 'x', 'long', 'required'],
      ['2', 'who', 'string', 'optional'],
    ]);
  });

  it('--json prints the API answer; decimal(P,S) and fixed[N] arrive intact', async () => {
    const result = await tablemere([
      'table', 'create', api.warehouse, '--json',
      '--namespace', namespace, '--name', 'kinds',
      '--column', 'price:decimal(10,2):required', '--column', 'digest:FIXED[16]', '--column', 'at:timestamptz',
      '--column', 'day:date', '--column', 'id:uuid', '--column', 'ok:boolean', '--column', 'blob:binary',
    ]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const created = CreatedTable.parse(JSON.parse(result.stdout));
    expect(created.table).toBe(`${namespace}.kinds`);
    expect(created.schema.fields.map(({ name, type, required }) => [name, type, required])).toEqual([
      ['price', 'decimal(10,2)', true],
      ['digest', 'fixed[16]', false],
      ['at', 'timestamptz', false],
      ['day', 'date', false],
      ['id', 'uuid', false],
      ['ok', 'boolean', false],
      ['blob', 'binary', false],
    ]);
  });

  it('refuses an existing table with exit 1 and the API code', async () => {
    const result = await tablemere(['table', 'create', api.warehouse, '--namespace', namespace, '--name', 'events', '--column', 'x:long']);
    expectFailure(result, 1, /^error: table_exists: /);
  });
});

describe('tablemere table list', () => {
  it('prints one table per line, and the API answer with --json', async () => {
    const human = await tablemere(['table', 'list', api.warehouse, '--namespace', namespace]);
    expect(human.code).toBe(0);
    expect(human.stdout.trimEnd().split('\n').sort()).toEqual([`${namespace}.events`, `${namespace}.kinds`]);

    const json = await tablemere(['table', 'list', api.warehouse, '--json']);
    expect(json.code).toBe(0);
    const list = TableList.parse(JSON.parse(json.stdout));
    expect(list.tables).toContainEqual({ namespace, name: 'events', table: `${namespace}.events` });
  });

  it('says so on stderr when a namespace has no tables', async () => {
    const result = await tablemere(['table', 'list', api.warehouse, '--namespace', `${namespace}_empty`]);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(`no tables in namespace ${namespace}_empty of warehouse ${api.warehouse}\n`);
  });
});

describe('tablemere connect', () => {
  let output: string;

  beforeAll(async () => {
    const result = await tablemere(['connect', api.warehouse]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    output = result.stdout;
  });

  it('describes the warehouse and its catalog and never prints a secret', () => {
    const stack = stackEnv();
    expect(output).toContain(`warehouse ${api.warehouse}\n`);
    expect(output).toMatch(new RegExp(`REST URI\\s+${stack.ICEBERG_REST_URI}\n`));
    expect(output).toMatch(/S3 addressing\s+path-style\n/);
    expect(output).toContain(`spark.sql.catalog.${api.warehouse}.uri=${stack.ICEBERG_REST_URI}`);
    expect(output).not.toContain(stack.AWS_SECRET_ACCESS_KEY!);
    expect(output).not.toContain(api.adminKey);
  });

  it('ends with the sinks note and shows the ingest URL while sinks are on', () => {
    expect(output).toMatch(new RegExp(`\n  sink ingest URL\\s+${api.url}/v1/sinks/\\{sink_id\\}\n`));
    const from = output.slice(output.indexOf('\n# Sinks\n') + 1);
    const note = from.slice(0, from.indexOf('\n\n')).split('\n');
    expect(note[0]).toBe('# Sinks');
    expect(note.slice(1).every((line) => line.startsWith('# ') && line.length <= 96)).toBe(true);
    expect(note.slice(1).join(' ')).toContain('tablemere sink create');
  });

  it('ends with the read recipe of the sinks\' rejects files, for DuckDB and Python', () => {
    const bucket = stackEnv().TABLEMERE_INTAKE_BUCKET!;
    const recipe = output.slice(output.indexOf('\n# Sink rejects: ') + 1).trimEnd().split('\n');
    expect(recipe[0]).toBe(`# Sink rejects: s3://${bucket}/_sink/{sink_id}/rejects/*.ndjson`);
    expect(recipe).toContain('-- DuckDB (the S3 secret above)');
    expect(recipe.find((line) => line.startsWith('SELECT * FROM read_json('))).toContain(`'s3://${bucket}/_sink/{sink_id}/rejects/*.ndjson'`);
    expect(recipe.slice(recipe.indexOf('# Python (pyarrow)') + 1)).toEqual(expect.arrayContaining(['from pyarrow import fs', expect.stringMatching(/^rejects = \[json\.loads/)]));
  });

  it('prints a PyIceberg snippet that loads the table: x required long, who optional string', async () => {
    const checked = await engineCheck('pyiceberg_check.py', section(output, '# PyIceberg'), 'events');
    expect(checked).toEqual({
      fields: [
        { id: 1, name: 'x', type: 'long', required: true },
        { id: 2, name: 'who', type: 'string', required: false },
      ],
      rows: [
        { x: 1, who: 'north' },
        { x: 2, who: null },
      ],
    });
  });

  it('prints a DuckDB snippet that attaches the catalog and reads the rows', async () => {
    const checked = await engineCheck('duckdb_check.py', section(output, '-- DuckDB'), 'events');
    expect(checked).toEqual({ rows: [{ x: 1, who: 'north' }, { x: 2, who: null }] });
  });

  it('--json prints the API answer', async () => {
    const result = await tablemere(['connect', '--json']);
    expect(result.code).toBe(0);
    const connection = Connection.parse(JSON.parse(result.stdout));
    expect(connection.warehouse.name).toBe(api.warehouse);
    expect(connection.warehouse.s3.path_style).toBe(true);
  });
});

describe('exit codes', () => {
  it('2 for an unknown type, before the API is called', async () => {
    // Nothing listens at the URL: had the API been called this would be exit 3.
    const env = userEnv({ TABLEMERE_API_URL: `http://127.0.0.1:${await freePort()}` });
    const result = await tablemere(['table', 'create', api.warehouse, '--namespace', namespace, '--name', 'bad', '--column', 'x:lng'], env);
    expectFailure(result, 2, /^error: --column 'x:lng': unknown type "lng"; types: boolean int long/);
  });

  it('2 for flags commander refuses', async () => {
    expectFailure(await tablemere(['table', 'create', api.warehouse, '--namespace', namespace]), 2, /^error: required option '--name <name>' not specified$/);
    expectFailure(await tablemere(['table', 'lst']), 2, /^error: unknown command 'lst' \(Did you mean list\?\)$/);
    expectFailure(await tablemere(['table']), 2, /^error: missing command: run 'tablemere table --help'$/);
  });

  it('2 when no API key is configured', async () => {
    const result = await tablemere(['table', 'list', api.warehouse], { TABLEMERE_API_URL: api.url });
    expectFailure(result, 2, /^error: no API key: set TABLEMERE_API_KEY or pass --api-key$/);
  });

  it('1 for a key the API does not know', async () => {
    const wrong = `tm_key_${'0'.repeat(12)}_${'A'.repeat(43)}`;
    const result = await tablemere(['table', 'list', api.warehouse, '--api-key', wrong]);
    expectFailure(result, 1, /^error: unauthorized: /);
  });

  it('1 for a warehouse the project does not have', async () => {
    const result = await tablemere(['connect', 'nowhere']);
    expectFailure(result, 1, /^error: warehouse_not_found: /);
  });

  it('3 when the API is down', async () => {
    const down = `http://127.0.0.1:${await freePort()}`;
    const result = await tablemere(['table', 'list', api.warehouse], userEnv({ TABLEMERE_API_URL: down }));
    expectFailure(result, 3, new RegExp(`^error: cannot reach the API at ${down} \\(ECONNREFUSED\\)$`));
  });
});

describe('configuration and installation', () => {
  it("reads a checkout's .stack/env from any directory below it", async () => {
    const checkout = outsideDir();
    mkdirSync(path.join(checkout, '.stack'));
    mkdirSync(path.join(checkout, 'deep', 'er'), { recursive: true });
    writeFileSync(
      path.join(checkout, '.stack', 'env'),
      `export TABLEMERE_API_URL='${api.url}'\nexport TABLEMERE_API_KEY='${api.adminKey}'\n`,
    );
    const result = await runCli(['table', 'list', api.warehouse, '--namespace', namespace], { cwd: path.join(checkout, 'deep', 'er') });
    expect(result.stderr).toBe('');
    expect(result.stdout).toContain(`${namespace}.events\n`);
  });

  it('runs as `npx tablemere` in the checkout and by absolute path elsewhere, documenting exit codes', async () => {
    const viaNpx = await runCli(['--help'], { cwd: repoRoot, command: ['npx', '--no-install', 'tablemere'] });
    expect(viaNpx.code).toBe(0);
    expect(viaNpx.stdout).toContain('Usage: tablemere');
    expect(viaNpx.stdout).toContain('Exit codes:');

    const absolute = await runCli(['table', 'create', '--help'], { command: [cliBin] });
    expect(absolute.code).toBe(0);
    expect(absolute.stdout).toContain('decimal(P,S)');

    const helpCommand = await runCli(['help', 'table'], { command: [cliBin] });
    expect([helpCommand.code, helpCommand.stderr]).toEqual([0, '']);
    expect(helpCommand.stdout).toContain('Usage: tablemere table');
  });
});
