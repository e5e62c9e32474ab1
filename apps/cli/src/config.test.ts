import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveApiConfig } from './config.ts';
import { CliError } from './errors.ts';

const root = mkdtempSync(path.join(tmpdir(), 'tablemere-cli-config-'));
mkdirSync(path.join(root, '.stack'));
writeFileSync(
  path.join(root, '.stack', 'env'),
  "export TABLEMERE_API_URL='http://from-file:8080/'\nexport TABLEMERE_API_KEY='key-from-file'\n",
);
const outside = mkdtempSync(path.join(tmpdir(), 'tablemere-cli-outside-'));
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

function refusal(run: () => unknown): CliError {
  try {
    run();
  } catch (error) {
    if (error instanceof CliError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('resolveApiConfig', () => {
  it('reads the stack file for what the environment lacks, and drops a trailing slash', () => {
    expect(resolveApiConfig({ flags: {}, env: {}, cwd: root })).toEqual({ apiUrl: 'http://from-file:8080', apiKey: 'key-from-file' });
    expect(resolveApiConfig({ flags: {}, env: { TABLEMERE_API_KEY: 'env-key' }, cwd: root })).toEqual({
      apiUrl: 'http://from-file:8080',
      apiKey: 'env-key',
    });
  });

  it('lets flags win over the environment, and the environment over the file', () => {
    const env = { TABLEMERE_API_URL: 'http://from-env', TABLEMERE_API_KEY: 'env-key' };
    expect(resolveApiConfig({ flags: {}, env, cwd: root })).toEqual({ apiUrl: 'http://from-env', apiKey: 'env-key' });
    expect(resolveApiConfig({ flags: { apiUrl: 'https://flag', apiKey: 'flag-key' }, env, cwd: root })).toEqual({
      apiUrl: 'https://flag',
      apiKey: 'flag-key',
    });
  });

  it('treats empty values as unset', () => {
    const env = { TABLEMERE_API_URL: '', TABLEMERE_API_KEY: ' ' };
    expect(resolveApiConfig({ flags: {}, env, cwd: root })).toEqual({ apiUrl: 'http://from-file:8080', apiKey: 'key-from-file' });
  });

  it('refuses, as a usage error, when the URL or key is missing or the URL is not http(s)', () => {
    const noUrl = refusal(() => resolveApiConfig({ flags: {}, env: { TABLEMERE_API_KEY: 'k' }, cwd: outside }));
    expect([noUrl.kind, noUrl.message]).toEqual(['usage', 'no API URL: set TABLEMERE_API_URL or pass --api-url']);
    const noKey = refusal(() => resolveApiConfig({ flags: { apiUrl: 'http://x' }, env: {}, cwd: outside }));
    expect([noKey.kind, noKey.message]).toEqual(['usage', 'no API key: set TABLEMERE_API_KEY or pass --api-key']);
    expect(refusal(() => resolveApiConfig({ flags: { apiUrl: 'ftp://x', apiKey: 'k' }, env: {}, cwd: outside })).message).toContain(
      'not an http(s) URL',
    );
    expect(refusal(() => resolveApiConfig({ flags: { apiUrl: 'nope', apiKey: 'k' }, env: {}, cwd: outside })).message).toContain(
      'not a URL',
    );
  });
});
