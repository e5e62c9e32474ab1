#!/usr/bin/env node
// Installs what a fresh clone lacks: npm packages and the project's Python venv (SeaweedFS and the
// test readers). Plain Node with no dependencies, because it runs before `npm ci` has.
// Re-runs an install only when its inputs changed (a hash stamp beside the install).
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const quiet = process.argv.includes('--quiet');

function hashOf(...files) {
  const h = createHash('sha256');
  for (const f of files) h.update(readFileSync(path.join(root, f)));
  return h.digest('hex');
}

function run(cmd, args, what) {
  if (!quiet) console.log(`[install] ${what}: ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { cwd: root, stdio: quiet ? ['ignore', 'ignore', 'inherit'] : 'inherit' });
  if (r.status !== 0) {
    console.error(`[install] ${what} failed (exit ${r.status ?? r.signal}): ${cmd} ${args.join(' ')}`);
    process.exit(1);
  }
}

function ensure(stampFile, inputs, install) {
  const stamp = path.join(root, stampFile);
  const want = hashOf(...inputs);
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === want) return;
  install();
  writeFileSync(stamp, want);
}

// `npm ci` on a fresh clone; an existing tree is updated in place so running processes keep working.
ensure('node_modules/.tablemere-install', ['package-lock.json'], () =>
  existsSync(path.join(root, 'node_modules'))
    ? run('npm', ['install', '--no-audit', '--no-fund'], 'npm packages')
    : run('npm', ['ci', '--no-audit', '--no-fund'], 'npm packages'),
);

const python = process.env.PYTHON ?? 'python3';
const venvPython = path.join(root, '.venv', 'bin', 'python');
ensure('.venv/.tablemere-install', ['requirements.txt'], () => {
  if (!existsSync(venvPython)) run(python, ['-m', 'venv', '.venv'], 'python venv');
  run(venvPython, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--only-binary=:all:', '-r', 'requirements.txt'], 'python packages');
});
