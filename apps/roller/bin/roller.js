#!/usr/bin/env node
// The roller's operator commands (src/cli.ts: roll, upkeep, intents). TypeScript run directly:
// register tsx's loader, then load the entry. On a Node older than the project's floor (a machine
// whose own node is 20) it runs itself again on the project's Node (scripts/node-runtime.mjs), so
// the AWS SDK runs on a Node it supports.
import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { NodeRuntimeError, nodeBinDir } from '../../../scripts/node-runtime.mjs';

let dir;
try {
  dir = nodeBinDir();
} catch (err) {
  if (!(err instanceof NodeRuntimeError)) throw err;
  console.error(`error: ${err.message}`);
  process.exit(2);
}
// nodeBinDir() is this process's own when its Node is new enough.
if (dir !== path.dirname(process.execPath)) {
  const child = spawn(path.join(dir, 'node'), [fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
  // A stop sent to this process alone reaches the command, which then ends its roll at a safe point
  // and gives the lease back. Ctrl-C already reaches both (the terminal signals the whole group):
  // passing it on would be a second SIGINT, which ends the command at once.
  process.on('SIGINT', () => {});
  for (const signal of ['SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('error', (err) => {
    console.error(`error: cannot run ${path.join(dir, 'node')}: ${err.message}`);
    process.exit(2);
  });
  child.on('exit', (code, signal) => process.exit(code ?? 128 + (os.constants.signals[signal] ?? 0)));
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli.ts');
}
