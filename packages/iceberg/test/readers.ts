import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { repoRoot, stackEnv } from '../../../tests/support/stack.ts';
import { parseJson } from '../src/index.ts';

const run = promisify(execFile);
const readersDir = path.join(repoRoot, 'tests', 'readers');
const python = path.join(repoRoot, '.venv', 'bin', 'python');

/** Runs one of the independent reader scripts and parses its JSON losslessly. */
async function read(script: string, args: string[]): Promise<unknown> {
  const { stdout } = await run(python, [path.join(readersDir, script), ...args], {
    env: { ...process.env, ...stackEnv() },
    cwd: readersDir,
    maxBuffer: 256 * 1024 * 1024,
  });
  return parseJson(stdout);
}

export type Row = Record<string, unknown>;

export async function pyicebergRows(namespace: string, table: string): Promise<Row[]> {
  return ((await read('pyiceberg_read.py', ['rows', namespace, table])) as { rows: Row[] }).rows;
}

export interface ReadSnapshot {
  'snapshot-id': string;
  summary: Record<string, string>;
}

/** The snapshots along main, newest first, as PyIceberg sees them. */
export async function pyicebergSnapshots(namespace: string, table: string): Promise<ReadSnapshot[]> {
  return ((await read('pyiceberg_read.py', ['snapshots', namespace, table])) as { snapshots: ReadSnapshot[] }).snapshots;
}

export async function pyicebergSchema(namespace: string, table: string): Promise<{ fields: Array<Record<string, unknown>> }> {
  return ((await read('pyiceberg_read.py', ['schema', namespace, table])) as { schema: { fields: Array<Record<string, unknown>> } }).schema;
}

export async function duckdbRows(metadataLocation: string): Promise<Row[]> {
  return ((await read('duckdb_read.py', [metadataLocation])) as { rows: Row[] }).rows;
}
