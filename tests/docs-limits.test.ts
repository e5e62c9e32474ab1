/**
 * docs/limits.md is what scripts/limits-table.ts writes from the current limits, so a limit
 * changed in packages/contracts (or a configuration default of the API or the roller) without
 * `npm run docs:limits` fails npm test. Needs no stack.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SEND_BODY_LIMIT } from '@tablemere/contracts';
import { bytes, difference, LIMITS_FILE, render } from '../scripts/limits-table.ts';
import { repoRoot } from './support/stack.ts';

describe('docs/limits.md', () => {
  it('is what `npm run docs:limits` writes (scripts/limits-table.ts --check)', () => {
    const check = spawnSync(process.execPath, ['--import', 'tsx', path.join('scripts', 'limits-table.ts'), '--check'], { cwd: repoRoot, encoding: 'utf8' });
    expect(check.status, `${check.stderr}${check.stdout}`).toBe(0);
    expect(check.stdout).toContain('docs/limits.md is up to date');
  });

  it('holds the values of the constants, formatted for people', () => {
    const text = readFileSync(LIMITS_FILE, 'utf8');
    expect(text).toBe(render());
    expect(bytes(SEND_BODY_LIMIT)).toBe('16 MiB');
    expect(text).toContain('| 16 MiB |');
  });

  it('names the lines that differ when a limit changed and the table did not', () => {
    const now = render();
    const stale = now.replace('| 16 MiB |', '| 8 MiB |');
    expect(stale).not.toBe(now);
    const diff = difference(stale, now);
    expect(diff).toHaveLength(2);
    expect(diff[0]).toMatch(/^- \d+: .*\| 8 MiB \|/);
    expect(diff[1]).toMatch(/^\+ \d+: .*\| 16 MiB \|/);
  });
});
