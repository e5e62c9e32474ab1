#!/usr/bin/env node
// The CLI is TypeScript run directly: register tsx's loader, then load the entry. On a Node older
// than the project's floor it runs itself again on the project's Node (scripts/node-runtime.mjs).
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { NodeRuntimeError, nodeBinDir } from '../../../scripts/node-runtime.mjs';

let dir;
try {
  dir = nodeBinDir();
} catch (err) {
  if (!(err instanceof NodeRuntimeError)) throw err;
  console.error(`error: ${err.message}`);
  process.exit(4);
}
// nodeBinDir() is this process's own when its Node is new enough.
if (dir !== path.dirname(process.execPath)) {
  const r = spawnSync(path.join(dir, 'node'), [fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exit(r.status ?? 4);
}
const { register } = await import('tsx/esm/api');
register();
await import('../src/main.ts');
