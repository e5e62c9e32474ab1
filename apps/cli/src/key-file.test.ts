import { existsSync, mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CliError } from './errors.ts';
import { type KeyFile, PendingKeyFile, readKeyFile } from './key-file.ts';

const content: KeyFile = {
  format: 'tablemere-send-key/1',
  sink_id: 'snk_0123456789ab',
  sink_name: 'events_in',
  warehouse: 'garden',
  table: 'garden.events',
  ingest_url: 'http://127.0.0.1:8787/v1/sinks/snk_0123456789ab',
  send_key: `tm_send_0123456789ab_${'A'.repeat(43)}`,
};

const dir = () => mkdtempSync(path.join(tmpdir(), 'tablemere-key-file-'));

function refusal(run: () => unknown): CliError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(CliError);
    return error as CliError;
  }
  throw new Error('expected a refusal');
}

describe('PendingKeyFile', () => {
  it('claims a 0600 file beside the target, then moves the key into place', () => {
    const d = dir();
    const target = path.join(d, 'key.json');
    const pending = PendingKeyFile.claim(target, false);
    expect(existsSync(target)).toBe(false);
    const [temp] = readdirSync(d);
    expect(statSync(path.join(d, temp!)).mode & 0o777).toBe(0o600);
    pending.commit(content);
    expect(readdirSync(d)).toEqual(['key.json']);
    expect(statSync(target).mode & 0o777).toBe(0o600);
    expect(readKeyFile(target)).toEqual(content);
  });

  it('refuses an existing file unless forced, and never replaces one that appears meanwhile', () => {
    const d = dir();
    const target = path.join(d, 'key.json');
    writeFileSync(target, 'old', { mode: 0o644 });
    expect(refusal(() => PendingKeyFile.claim(target, false)).kind).toBe('usage');

    const forced = PendingKeyFile.claim(target, true);
    forced.commit(content);
    expect(statSync(target).mode & 0o777).toBe(0o600);
    expect(readKeyFile(target).send_key).toBe(content.send_key);

    const racing = path.join(d, 'race.json');
    const pending = PendingKeyFile.claim(racing, false);
    writeFileSync(racing, 'someone else');
    const error = refusal(() => pending.commit(content));
    expect(error.kind).toBe('usage');
    expect(error.message).toMatch(/^sink events_in \(snk_0123456789ab\) was created, but .*race\.json could not be written \(EEXIST\); its key file is (.*) \(mode 0600\)$/);
    expect(error.message).not.toContain(content.send_key);
    expect(readFileSync(racing, 'utf8')).toBe('someone else');
    const kept = /its key file is (.*) \(mode 0600\)$/.exec(error.message)![1]!;
    expect(readKeyFile(kept)).toEqual(content);
  });

  it('leaves nothing behind when abandoned, and refuses a directory it cannot write', () => {
    const d = dir();
    PendingKeyFile.claim(path.join(d, 'key.json'), false).abandon();
    expect(readdirSync(d)).toEqual([]);
    expect(refusal(() => PendingKeyFile.claim(path.join(d, 'missing', 'key.json'), false)).message).toMatch(/cannot write there \(ENOENT\)$/);
  });
});

describe('readKeyFile', () => {
  it('refuses files that are not key files, and a key of another sink', () => {
    const d = dir();
    const file = (name: string, text: string) => {
      const p = path.join(d, name);
      writeFileSync(p, text);
      return p;
    };
    expect(refusal(() => readKeyFile(path.join(d, 'none.json'))).message).toMatch(/cannot read it \(ENOENT\)$/);
    expect(refusal(() => readKeyFile(file('text', 'tm_send_...'))).message).toMatch(/\(not JSON\)$/);
    expect(refusal(() => readKeyFile(file('partial.json', '{"format":"tablemere-send-key/1"}'))).message).toMatch(/sink_id/);
    const foreign = { ...content, sink_id: 'snk_ffffffffffff' };
    expect(refusal(() => readKeyFile(file('foreign.json', JSON.stringify(foreign)))).message).toMatch(/belongs to another sink than snk_ffffffffffff$/);
  });
});
