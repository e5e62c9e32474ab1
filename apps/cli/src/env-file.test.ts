import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findStackEnv, loadStackEnv, parseEnvFile } from './env-file.ts';

describe('parseEnvFile', () => {
  it('reads export lines with single-quoted values', () => {
    const text = [
      '# development stack',
      "export TABLEMERE_API_URL='http://127.0.0.1:8080'",
      "export TABLEMERE_API_KEY='tm_key_0123456789ab_x'",
      '',
    ].join('\n');
    expect(parseEnvFile(text)).toEqual({
      TABLEMERE_API_URL: 'http://127.0.0.1:8080',
      TABLEMERE_API_KEY: 'tm_key_0123456789ab_x',
    });
  });

  it("undoes the '\\'' escape for quotes and keeps everything else literal", () => {
    const text = `export A='it'\\''s'\nexport B='$HOME "x" \\n'\nexport C=''\r\n`;
    expect(parseEnvFile(text)).toEqual({ A: "it's", B: '$HOME "x" \\n', C: '' });
  });

  it('ignores lines that are not export NAME=\'value\'', () => {
    expect(parseEnvFile("NAME='x'\nexport B=unquoted\nexport C='open\nexport D='ok'")).toEqual({ D: 'ok' });
  });
});

describe('findStackEnv / loadStackEnv', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  function checkout(): string {
    const root = mkdtempSync(path.join(tmpdir(), 'tablemere-cli-env-'));
    dirs.push(root);
    mkdirSync(path.join(root, '.stack'));
    writeFileSync(path.join(root, '.stack', 'env'), "export TABLEMERE_API_URL='http://api.test:1'\n");
    mkdirSync(path.join(root, 'apps', 'cli'), { recursive: true });
    return root;
  }

  it('finds the nearest .stack/env walking up from a subdirectory', () => {
    const root = checkout();
    const sub = path.join(root, 'apps', 'cli');
    expect(findStackEnv(sub)).toBe(path.join(root, '.stack', 'env'));
    expect(loadStackEnv(sub)).toEqual({ TABLEMERE_API_URL: 'http://api.test:1' });
  });

  it('answers nothing outside a checkout', () => {
    const outside = mkdtempSync(path.join(tmpdir(), 'tablemere-cli-none-'));
    dirs.push(outside);
    expect(findStackEnv(outside)).toBeUndefined();
    expect(loadStackEnv(outside)).toEqual({});
  });
});
