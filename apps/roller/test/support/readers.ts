import { execFile, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { parseJson } from '@tablemere/iceberg';
import { repoRoot, stackEnv } from '../../../../tests/support/stack.ts';

const run = promisify(execFile);
const readers = path.join(repoRoot, 'tests', 'readers');
const python = path.join(repoRoot, '.venv', 'bin', 'python');

export type Row = Record<string, unknown>;

/** Settings of the store and catalog to read from: the running stack's unless given. */
export type ReaderEnv = Record<string, string>;

async function read(args: string[], env: ReaderEnv = stackEnv(), script = 'read_table.py'): Promise<unknown> {
  const { stdout } = await run(python, [path.join(readers, script), ...args], {
    env: { ...process.env, ...env },
    cwd: readers,
    maxBuffer: 512 * 1024 * 1024,
  });
  // Lossless: longs stay exact (bigint when beyond 2^53).
  return parseJson(stdout);
}

export async function pyicebergRows(namespace: string, table: string, env?: ReaderEnv): Promise<Row[]> {
  return ((await read(['pyiceberg', namespace, table], env)) as { rows: Row[] }).rows;
}

export async function duckdbRows(metadataLocation: string, env?: ReaderEnv): Promise<Row[]> {
  return ((await read(['duckdb', metadataLocation], env)) as { rows: Row[] }).rows;
}

export async function pyicebergSnapshots(namespace: string, table: string): Promise<Array<{ 'snapshot-id': string; summary: Record<string, string> }>> {
  return ((await read(['snapshots', namespace, table], undefined, 'pyiceberg_read.py')) as { snapshots: Array<{ 'snapshot-id': string; summary: Record<string, string> }> })
    .snapshots;
}

/**
 * Starts PyIceberg appending to the table in a loop, `pauseSeconds` between appends; `stop()`
 * ends it and answers how many appends landed in how many seconds.
 */
export function otherWriter(namespace: string, table: string, stopFile: string, pauseSeconds = 0): { stop(): Promise<{ appends: number; seconds: number }> } {
  const child = spawn(python, [path.join(readers, 'append_loop.py'), namespace, table, stopFile, String(pauseSeconds)], {
    env: { ...process.env, ...stackEnv() },
    cwd: readers,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const done = new Promise<{ appends: number; seconds: number }>((resolve, reject) =>
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(out) as { appends: number; seconds: number }) : reject(new Error(`append_loop.py exited ${code}: ${err}`)))),
  );
  return {
    async stop() {
      writeFileSync(stopFile, '');
      return done;
    },
  };
}
