import type { CreatedSink } from '@tablemere/contracts';
import { currentSchema } from '@tablemere/iceberg';
import { rejectsPrefix } from '@tablemere/store';
import { storedBatch, storedBatches } from '../../../../tests/support/intake.ts';
import { duckdbRows, pyicebergRows, type Row } from './readers.ts';
import type { TestStack } from './stack.ts';

/** `2026-09-21T12:00:00.123Z` or `...123456Z` → the microsecond form both readers print. */
export function micros(timestamp: string): string {
  const m = /^(.*T\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?(?:Z|\+00:00)$/.exec(timestamp);
  if (!m) throw new Error(`not a UTC RFC 3339 timestamp: ${timestamp}`);
  return `${m[1]}.${(m[2] ?? '').padEnd(6, '0')}Z`;
}

/** The received time the intake stamped on a pending batch (what __ingest_ts must equal). */
export async function receivedOf(stack: TestStack, sinkId: string, batchId: string): Promise<string> {
  return micros((await storedBatch(stack.intake, sinkId, batchId)).received);
}

/** The ids of the batches pending in the intake (in segments or batch objects; rejects not counted). */
export async function intakeBatches(stack: TestStack, sinkId: string): Promise<string[]> {
  return (await storedBatches(stack.intake, sinkId)).map((b) => b.id);
}

/** The rejects lines of one batch, from whichever roll's rejects file holds them. */
export async function rejectsOf(stack: TestStack, sinkId: string, batchId: string): Promise<Array<Record<string, unknown>>> {
  const lines: Array<Record<string, unknown>> = [];
  for await (const page of stack.intake.list(rejectsPrefix(sinkId))) {
    for (const { key } of page.objects) {
      const { body } = await stack.intake.get(key);
      let text = '';
      for await (const chunk of body) text += (chunk as Buffer).toString('utf8');
      for (const line of text.split('\n')) {
        if (line === '') continue;
        const parsed = JSON.parse(line) as Record<string, unknown>;
        if (parsed.batch_id === batchId) lines.push(parsed);
      }
    }
  }
  if (lines.length === 0) throw new Error(`no rejects of batch ${batchId} in ${rejectsPrefix(sinkId)}`);
  return lines;
}

const byKey = (key: string) => (a: Row, b: Row) => {
  const x = a[key] as number | bigint;
  const y = b[key] as number | bigint;
  return x < y ? -1 : x > y ? 1 : 0;
};

/**
 * The table's rows as PyIceberg and DuckDB read them, sorted by `key`; fails unless both
 * engines read exactly the same rows.
 */
export async function readBoth(stack: TestStack, namespace: string, table: string, key = 'x'): Promise<Row[]> {
  const loaded = await stack.catalog.loadTable({ namespace, name: table });
  const [py, duck] = await Promise.all([pyicebergRows(namespace, table, stack.env), duckdbRows(loaded.metadataLocation!, stack.env)]);
  py.sort(byKey(key));
  duck.sort(byKey(key));
  if (JSON.stringify(py, big) !== JSON.stringify(duck, big)) {
    throw new Error(`PyIceberg and DuckDB disagree:\n${JSON.stringify(py, big).slice(0, 2000)}\n${JSON.stringify(duck, big).slice(0, 2000)}`);
  }
  return py;
}

const big = (_: string, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v);

export async function columnNames(stack: TestStack, namespace: string, table: string): Promise<string[]> {
  const loaded = await stack.catalog.loadTable({ namespace, name: table });
  return currentSchema(loaded.metadata).fields.map((f) => f.name);
}

export type { CreatedSink };

/** What the lease TTL would do after a while: a killed roller's lease runs out. */
export async function expireLease(stack: TestStack, sinkId: string): Promise<void> {
  await stack.pool.query(`UPDATE sink_leases SET expires_at = now() - interval '1 second' WHERE sink_id = $1`, [sinkId]);
}
