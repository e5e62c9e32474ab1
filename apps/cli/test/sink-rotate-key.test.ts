import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { RotatedSendKey, Sink } from '@tablemere/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../../tests/support/ports.ts';
import { KeyFile } from '../src/key-file.ts';
import { startTestApi, type TestApi } from './support/api.ts';
import { dropNamespace } from './support/catalog.ts';
import { type CliRun, runCli } from './support/run-cli.ts';

const namespace = `cli_rotate_${randomBytes(4).toString('hex')}`;
const work = mkdtempSync(path.join(tmpdir(), 'tablemere-cli-rotate-'));
const firstKey = path.join(work, 'first.json');
const secondKey = path.join(work, 'second.json');
const rows = path.join(work, 'rows.json');
let api: TestApi;

const userEnv = (overrides: Record<string, string> = {}) => ({ TABLEMERE_API_URL: api.url, TABLEMERE_API_KEY: api.adminKey, ...overrides });
const tablemere = (args: string[], env: Record<string, string> = userEnv()) => runCli(args, { env });
/** A producer holding only a key file. */
const sendWith = (keyFile: string) => runCli(['sink', 'send', rows, '--send-key-file', keyFile], { env: {} });

function ok(result: CliRun): CliRun {
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
  return result;
}

function failed(result: CliRun, code: number, line: RegExp): void {
  expect(result.code).toBe(code);
  expect(result.stderr.trimEnd().split('\n').at(-1) ?? '').toMatch(line);
}

beforeAll(async () => {
  api = await startTestApi();
  writeFileSync(rows, '[{"x": 1}]');
  ok(await tablemere(['table', 'create', api.warehouse, '--namespace', namespace, '--name', 'events', '--column', 'x:long:required']));
  ok(await tablemere(['sink', 'create', api.warehouse, '--table', `${namespace}.events`, '--name', 'events_in', '--save', firstKey]));
});
afterAll(async () => {
  if (api) await tablemere(['sink', 'delete', 'events_in', '--discard-pending']);
  await api?.stop();
  await dropNamespace(namespace);
  // It holds send key files.
  rmSync(work, { recursive: true, force: true });
});

describe('tablemere sink rotate-key', () => {
  it('stops before calling the API when the new key has nowhere to go, or the options are wrong', async () => {
    // Nothing listens at this URL: had the API been called, the exit code would be 3.
    const down = userEnv({ TABLEMERE_API_URL: `http://127.0.0.1:${await freePort()}` });
    expect(await tablemere(['sink', 'rotate-key', 'events_in'], down)).toEqual({
      code: 2,
      stdout: '',
      stderr: 'error: say where the send key goes: --save FILE (written mode 0600) or --show-key (printed once); nothing was rotated\n',
    });
    failed(await tablemere(['sink', 'rotate-key', 'events_in', '--save', firstKey], down), 2, /^error: --save .*first\.json: the file exists; pass --force to replace it$/);
    failed(await tablemere(['sink', 'rotate-key', 'events_in', '--show-key', '--overlap', '8d'], down), 2, /^error: --overlap '8d': at most 7 d/);
    failed(await tablemere(['sink', 'rotate-key', 'events_in', '--show-key', '--overlap', '24'], down), 2, /^error: duration '24': write a number and a unit/);
    expect(readdirSync(work).sort()).toEqual(['first.json', 'rows.json']);
  });

  it('--save writes the new key with mode 0600 and prints no key; both keys send during the overlap', async () => {
    const result = ok(await tablemere(['sink', 'rotate-key', 'events_in', '--overlap', '1h', '--save', secondKey]));
    expect(statSync(secondKey).mode & 0o777).toBe(0o600);
    const before = KeyFile.parse(JSON.parse(readFileSync(firstKey, 'utf8')));
    const after = KeyFile.parse(JSON.parse(readFileSync(secondKey, 'utf8')));
    expect(after).toEqual({ ...before, send_key: after.send_key });
    expect(after.send_key).not.toBe(before.send_key);
    expect(result.stdout).not.toMatch(/(tm|al)_send_/);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(`rotated the send key of sink events_in (${before.sink_id})`);
    expect(lines[1]).toContain(`saved to ${secondKey} (mode 0600)`);
    expect(lines[2]).toMatch(/^\s+old key\s+works until \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ \(in (1 h|59 min[^)]*)\); move every producer/);
    expect(readdirSync(work).sort()).toEqual(['first.json', 'rows.json', 'second.json']);

    ok(await sendWith(firstKey));
    ok(await sendWith(secondKey));
    const details = ok(await tablemere(['sink', 'get', 'events_in'])).stdout;
    expect(details).toMatch(/\n\s+send key\s+rotated (just now|\d+ s ago); the old key works until .* \(in (1 h|59 min)/);
    const view = Sink.parse(JSON.parse(ok(await tablemere(['sink', 'get', 'events_in', '--json'])).stdout));
    expect(view.key_rotation.old_key_stops_at).not.toBeNull();
  });

  it('is refused during the overlap; --finish stops the old key now, --overlap 0 with it', async () => {
    const thirdKey = path.join(work, 'third.json');
    failed(await tablemere(['sink', 'rotate-key', 'events_in', '--save', thirdKey]), 1, /^error: key_rotation_in_progress: Sink events_in's old send key works until /);
    expect(readdirSync(work)).not.toContain('third.json');

    const shown = ok(await tablemere(['sink', 'rotate-key', 'events_in', '--finish', '--overlap', '0', '--show-key', '--json']));
    const answer = RotatedSendKey.parse(JSON.parse(shown.stdout));
    expect(answer.key_rotation.old_key_stops_at).toBeNull();
    // Both earlier keys stop at once: the first by --finish, the second by an overlap of 0.
    failed(await sendWith(firstKey), 1, /unauthorized/);
    failed(await sendWith(secondKey), 1, /unauthorized/);
    const noKey = ok(await tablemere(['sink', 'rotate-key', 'events_in', '--show-key', '--json', '--overlap', '0']));
    expect(noKey.stdout.match(/tm_send_/g)).toHaveLength(1);
    const withoutKey = JSON.parse(ok(await tablemere(['sink', 'rotate-key', 'events_in', '--json', '--save', thirdKey, '--overlap', '0'])).stdout);
    expect(withoutKey).not.toHaveProperty('send_key');
    ok(await sendWith(thirdKey));
    expect(ok(await tablemere(['sink', 'get', 'events_in'])).stdout).toMatch(/\n\s+send key\s+rotated .*; the old key no longer works\n/);
  });
});
