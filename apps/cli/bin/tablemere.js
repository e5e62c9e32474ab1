#!/usr/bin/env node
// The CLI is TypeScript run directly: register tsx's loader, then load the entry. On a Node older
// than the project's floor it runs itself again on the project's Node (scripts/node-runtime.mjs).
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { MIN_MAJOR, NodeRuntimeError, nodeBinDir } from '../../../scripts/node-runtime.mjs';

if (Number(process.versions.node.split('.')[0]) < MIN_MAJOR) {
  let dir;
  try {
    dir = nodeBinDir();
  } catch (err) {
    if (!(err instanceof NodeRuntimeError)) throw err;
    console.error(`error: ${err.message}`);
    process.exit(4);
  }
  const r = spawnSync(path.join(dir, 'node'), [fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exit(r.status ?? 4);
}
const { register } = await import('tsx/esm/api');
register();
await import('../src/main.ts');
