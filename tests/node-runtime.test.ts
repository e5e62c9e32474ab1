import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { repoRoot } from './support/stack.ts';

const runtime = path.join(repoRoot, 'scripts', 'node-runtime.mjs');
const MIN_MAJOR = Number(/>=(\d+)/.exec(JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')).engines.node)![1]);

describe('scripts/node-runtime.mjs', () => {
  it('puts a Node of the supported line first on PATH, for commands and for shell scripts', () => {
    const viaCommand = spawnSync('node', [runtime, 'sh', '-c', 'node -p process.versions.node'], { encoding: 'utf8' });
    expect(viaCommand.status, viaCommand.stderr).toBe(0);
    expect(Number(viaCommand.stdout.split('.')[0])).toBeGreaterThanOrEqual(MIN_MAJOR);

    const PATH = spawnSync('node', [runtime, '--path'], { encoding: 'utf8' }).stdout.trim();
    const viaPath = spawnSync('node', ['-p', 'process.versions.node'], { encoding: 'utf8', env: { ...process.env, PATH } });
    expect(viaPath.stdout.trim()).toBe(viaCommand.stdout.trim());
  });

  it("answers with the command's exit code", () => {
    expect(spawnSync('node', [runtime, 'sh', '-c', 'exit 7']).status).toBe(7);
    const missing = spawnSync('node', [runtime, 'no-such-command-here'], { encoding: 'utf8' });
    expect(missing.status).toBe(127);
    expect(missing.stderr).toContain('[node] cannot run no-such-command-here');
  });
});
