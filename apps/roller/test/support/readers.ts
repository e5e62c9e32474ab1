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

async function runReader(script: string, args: string[], env: ReaderEnv): Promise<string> {
  const { stdout } = await run(python, [path.join(readers, script), ...args], {
    env: { ...process.env, ...env },
    cwd: readers,
    maxBuffer: 512 * 1024 * 1024,
  });
  return stdout;
}

async function read(args: string[], env: ReaderEnv = stackEnv(), script = 'read_table.py'): Promise<unknown> {
  // Lossless: longs stay exact (bigint when beyond 2^53).
  return parseJson(await runReader(script, args, env));
}

/** The table's rows as PyIceberg reads them; only `columns` when given. */
export async function pyicebergRows(namespace: string, table: string, env?: ReaderEnv, columns?: readonly string[]): Promise<Row[]> {
  return ((await read(['pyiceberg', namespace, table, ...(columns ? [columns.join(',')] : [])], env)) as { rows: Row[] }).rows;
}

export async function duckdbRows(metadataLocation: string, env?: ReaderEnv): Promise<Row[]> {
  return ((await read(['duckdb', metadataLocation], env)) as { rows: Row[] }).rows;
}

export async function pyicebergSnapshots(namespace: string, table: string): Promise<Array<{ 'snapshot-id': string; summary: Record<string, string> }>> {
  return ((await read(['snapshots', namespace, table], undefined, 'pyiceberg_read.py')) as { snapshots: Array<{ 'snapshot-id': string; summary: Record<string, string> }> })
    .snapshots;
}

/** PyIceberg replaces every row of the table with one of its own (tests/readers/overwrite.py). */
export async function overwriteTable(namespace: string, table: string, env: ReaderEnv): Promise<void> {
  await runReader('overwrite.py', [namespace, table], env);
}

export type SparkMode = 'rows' | 'types' | 'files' | 'maintain' | 'partition_rows' | 'partition_files' | 'java_types' | 'lineage';

/** One column's metrics in one data file (Iceberg's readable_metrics); bounds in the rows' form. */
export interface ColumnMetrics {
  column_size: number | null;
  value_count: number | null;
  null_value_count: number | null;
  nan_value_count: number | null;
  lower_bound: unknown;
  upper_bound: unknown;
}

/** What one step of tests/readers/spark_table.py printed. */
export interface SparkOutput {
  mode: SparkMode;
  namespace: string;
  table: string;
  /** rows: in the form pyicebergRows answers. */
  rows?: Row[];
  /** types: Spark's schema as JSON (`StructType.jsonValue()`) and the Iceberg Java schema's text. */
  spark?: { type: 'struct'; fields: Array<{ name: string; type: unknown; nullable: boolean }> };
  iceberg?: string;
  /** files: each live data file with its column metrics as Java decodes them, by column name. */
  files?: Array<{ file_path: string; record_count: number; readable_metrics: Record<string, ColumnMetrics> }>;
  /** partition_files: each live data file with the spec id and partition tuple Java reads from its manifest. */
  partition_files?: Array<{ file_path: string; spec_id: number; partition: Row; record_count: number }>;
  /** java_types: per column, whether Iceberg's Java generic reader gives the class the spec maps its type to. */
  java_types?: Record<string, { type: string; expected: string; ok: boolean; error?: string }>;
  /** maintain: the rows each procedure returned. */
  rewrite_data_files?: Array<Record<string, number>>;
  expire_snapshots?: Array<Record<string, number>>;
}

/**
 * Runs steps on one Spark session with Iceberg's Java runtime, in order (the Java reference,
 * tests/readers/spark_table.py). Each call starts Spark, which takes tens of seconds, over a minute on a
 * busy machine: ask for everything at once.
 */
export async function spark(steps: Array<{ mode: SparkMode; namespace: string; table: string }>, env: ReaderEnv = stackEnv()): Promise<SparkOutput[]> {
  const stdout = await runReader('spark_table.py', steps.flatMap((s) => [s.mode, s.namespace, s.table]), env);
  return stdout
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => parseJson(line) as SparkOutput);
}

/** tests/readers/owner_create.py: the owner's PyIceberg creates a table (`name:type` columns, all optional). */
export async function ownerCreates(namespace: string, table: string, formatVersion: number, columns: string[], env: ReaderEnv = stackEnv()): Promise<void> {
  await runReader('owner_create.py', [namespace, table, String(formatVersion), ...columns], env);
}

/** tests/readers/owner_add_column.py: the owner's PyIceberg adds an optional column (`device.fw` for a nested one). */
export async function ownerAddsColumn(namespace: string, table: string, path: string, type: string, env: ReaderEnv = stackEnv()): Promise<{ schema_id: number; field_id: number }> {
  return (await read([namespace, table, path, type], env, 'owner_add_column.py')) as { schema_id: number; field_id: number };
}

/** tests/readers/partitioning.py: the owner's PyIceberg partitions a table, or plans a filtered scan. */
export async function partitioning(args: string[], env: ReaderEnv = stackEnv()): Promise<Record<string, unknown>> {
  return (await read(args, env, 'partitioning.py')) as Record<string, unknown>;
}

/**
 * Starts PyIceberg appending to the table in a loop, `pauseSeconds` between appends; `stop()`
 * ends it and answers how many appends landed in how many seconds.
 */
export function otherWriter(
  namespace: string,
  table: string,
  stopFile: string,
  pauseSeconds = 0,
  options: { most?: number; env?: ReaderEnv } = {},
): { done: Promise<{ appends: number; seconds: number }>; stop(): Promise<{ appends: number; seconds: number }> } {
  const args = [path.join(readers, 'append_loop.py'), namespace, table, stopFile, String(pauseSeconds), ...(options.most === undefined ? [] : [String(options.most)])];
  const child = spawn(python, args, {
    env: { ...process.env, ...(options.env ?? stackEnv()) },
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
    done,
    async stop() {
      writeFileSync(stopFile, '');
      return done;
    },
  };
}

/** One rejected row as a reader of the rejects files sees it. */
export interface RecipeReject {
  batch_id: string;
  row: unknown;
  reason: string;
  field: string;
}

/**
 * Runs GET /v1/connection's rejects read recipe (`sink_rejects`) for one sink with DuckDB and
 * with Python (pyarrow), as the recipe's user would.
 */
export async function rejectsByRecipe(recipe: unknown, sinkId: string, env?: ReaderEnv): Promise<{ duckdb: RecipeReject[]; python: RecipeReject[] }> {
  return (await read([JSON.stringify(recipe), sinkId], env, 'rejects_recipe.py')) as { duckdb: RecipeReject[]; python: RecipeReject[] };
}
