import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CreatedSink } from '@tablemere/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pyicebergRows } from '../../roller/test/support/readers.ts';
import { startTestApi, type TestApi } from './support/api.ts';
import { dropNamespace } from './support/catalog.ts';
import { rollOnce } from './support/roller.ts';
import { type CliRun, runCli } from './support/run-cli.ts';

/** `tablemere sink create` creating its table: given columns, inferred ones, then rows through a roll to PyIceberg. */

const namespace = `cli_sink_table_${randomBytes(4).toString('hex')}`;
const work = mkdtempSync(path.join(tmpdir(), 'tablemere-cli-sink-table-'));
let api: TestApi;

const tablemere = (args: string[]) => runCli(args, { env: { TABLEMERE_API_URL: api.url, TABLEMERE_API_KEY: api.adminKey } });

function ok(result: CliRun): CliRun {
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
  return result;
}

function file(name: string, text: string): string {
  const at = path.join(work, name);
  writeFileSync(at, text);
  return at;
}

beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await dropNamespace(namespace);
  await api?.stop();
  // It holds send key files.
  rmSync(work, { recursive: true, force: true });
});

describe('tablemere sink create with its table', () => {
  it('--column creates the table as table create would, then the sink', async () => {
    const result = ok(await tablemere(['sink', 'create', api.warehouse, '--table', `${namespace}.given`, '--name', 'given_in', '--column', 'x:long:required', '--column', 'price:decimal(10,2)', '--show-key']));
    const lines = result.stdout.split('\n');
    expect(lines.slice(0, 3)).toEqual([`created table ${namespace}.given (Iceberg format v2)`, expect.stringMatching(/^location s3:\/\//), 'columns:']);
    expect(lines.slice(3, 5).map((line) => line.trim().split(/\s+/))).toEqual([
      ['1', 'x', 'long', 'required'],
      ['2', 'price', 'decimal(10,2)', 'optional'],
    ]);
    expect(lines[5]).toMatch(new RegExp(`^created sink given_in \\(snk_[0-9a-f]{12}\\) for ${namespace}.given in warehouse garden$`));
  });

  it('--infer-from creates the table from sample rows; rows sent afterwards roll into it and PyIceberg reads them', async () => {
    const sample = file(
      'sample.ndjson',
      [
        '{"device":"a1","temp_c":21,"at":"2026-12-02T11:30:00Z","tags":["east"],"pos":{"lat":52.1,"lon":4}}',
        '{"device":"a2","temp_c":21.5,"at":"2026-12-02T11:31:00.25+01:00","ok":true,"n":9007199254740993}',
      ].join('\n'),
    );
    const created = await tablemere(['sink', 'create', api.warehouse, '--table', `${namespace}.readings`, '--name', 'readings_in', '--infer-from', sample, '--show-key', '--json']);
    const sink = CreatedSink.parse(JSON.parse(ok(created).stdout));
    const types = Object.fromEntries(sink.created_table!.schema.fields.map((f) => [f.name, f.type]));
    expect(types).toMatchObject({ device: 'string', temp_c: 'double', at: 'timestamptz', ok: 'boolean', n: 'long', tags: { type: 'list', element: 'string' } });
    expect(sink.received.batches).toBe(0);

    const data = file(
      'data.json',
      JSON.stringify([
        { device: 'b1', temp_c: -3.25, at: '2026-12-02T12:00:00.5Z', tags: ['north', 'roof'], pos: { lat: 1.5, lon: -2 }, ok: false },
        { device: 'b2', temp_c: 4, n: 7 },
      ]).replace('"n":7', '"n":9007199254740993'),
    );
    ok(await runCli(['sink', 'send', sink.id, data, '--send-key', sink.send_key], { env: { TABLEMERE_API_URL: api.url } }));
    expect(await rollOnce(api, sink.id)).toMatchObject({ status: 'rolled', rows: 2, rejected_rows: 0 });

    const rows = await pyicebergRows(namespace, 'readings');
    // The first roll added __ingest_ts, as on any sink's table, and stamped both rows.
    expect(rows.map((row) => typeof row.__ingest_ts)).toEqual(['string', 'string']);
    expect(rows.map(({ __ingest_ts, ...row }) => row).sort((a, b) => String(a.device).localeCompare(String(b.device)))).toEqual([
      { device: 'b1', temp_c: -3.25, at: '2026-12-02T12:00:00.500000Z', tags: ['north', 'roof'], pos: { lat: 1.5, lon: -2 }, ok: false, n: null },
      { device: 'b2', temp_c: 4, at: null, tags: null, pos: null, ok: null, n: 9007199254740993n },
    ]);
  });

  it('names the fields a sample cannot type and creates nothing', async () => {
    const bad = file('bad.json', '[{"x": 1, "mixed": 1, "gone": null}, {"mixed": "one"}]');
    const result = await tablemere(['sink', 'create', api.warehouse, '--table', `${namespace}.bad`, '--name', 'bad_in', '--infer-from', bad, '--show-key']);
    expect(result.code).toBe(1);
    expect(result.stderr.trimEnd().split('\n').at(-1)).toMatch(
      /^error: schema_not_inferred: The sample rows in create_table.infer_from cannot give the table's columns: mixed \(holds numbers and strings; one type is needed\); gone \(holds only null; give its type\)\./,
    );
    const list = ok(await tablemere(['table', 'list', api.warehouse, '--namespace', namespace]));
    expect(list.stdout).not.toContain('bad');
  });

  it('refuses --column with --infer-from, and a sample row that is not an object, before calling the API', async () => {
    const notObject = file('not-object.ndjson', '{"x": 1}\n[1]\n');
    const both = await tablemere(['sink', 'create', api.warehouse, '--table', `${namespace}.t`, '--name', 't_in', '--column', 'x:long', '--infer-from', notObject, '--show-key']);
    expect([both.code, both.stderr.trim()]).toEqual([2, 'error: give --column or --infer-from, not both']);
    const row = await tablemere(['sink', 'create', api.warehouse, '--table', `${namespace}.t`, '--name', 't_in', '--infer-from', notObject, '--show-key']);
    expect([row.code, row.stderr.trim()]).toEqual([2, `error: ${notObject} line 2: row 2 is not a JSON object`]);
  });
});
