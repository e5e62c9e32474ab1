/**
 * bench:upkeep --schema-changes N: the owner's schema changes spread over the rolls, the rows the
 * producers send after each, and what every reader must then read for every row.
 *
 * The changes, in turn: a struct column `pos` added, a column nested in it, `status` renamed to
 * `state`, `battery` promoted int → long, `note` dropped, `humidity` promoted float → double;
 * past six, columns added at the top and in `pos` by turns. After each change the rows carry it:
 * values the change makes possible (longs past 2^32, doubles no float holds), the new names, the
 * new columns; rows sent before read null in the columns added after them.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { repoRoot } from '../../tests/support/stack.ts';

const FIRST_SIX = ['add:pos', 'add:pos.alt', 'rename:status:state', 'promote:battery', 'drop:note', 'promote:humidity'];

/** Change k (from 0) as schema_change.py takes it. */
export function schemaChange(k: number): string {
  if (k < FIRST_SIX.length) return FIRST_SIX[k]!;
  return k % 2 === 0 ? `add:extra${k}` : `add:pos.n${k}`;
}

/** The rolls (from 1) after which change 0, 1, ... is made: evenly between the first and the last. */
export function changeRolls(changes: number, rolls: number): number[] {
  return Array.from({ length: changes }, (_, k) => Math.max(1, Math.floor(((k + 1) * rolls) / (changes + 1))));
}

/** Makes change `k` on every table named (`namespace.table`) with PyIceberg, as a table's owner would. */
export function makeSchemaChange(k: number, tables: string[], env: Record<string, string>): void {
  const run = spawnSync(path.join(repoRoot, '.venv/bin/python'), [path.join(repoRoot, 'scripts/bench/schema_change.py'), schemaChange(k), ...tables], { env: { ...process.env, ...env }, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`schema_change.py ${schemaChange(k)} failed: ${run.stderr}`);
}

/** A sensor row as a producer sends it once the first `applied` changes were made. */
export function shapeRow(row: Record<string, unknown>, applied: number): Record<string, unknown> {
  const seq = row['seq'] as number;
  const out = { ...row };
  if (applied > 0) out['pos'] = { lat: seq / 4 };
  for (let k = 1; k < applied; k++) {
    const change = schemaChange(k);
    if (change.startsWith('add:pos.')) (out['pos'] as Record<string, unknown>)[change.slice(8)] = seq * (k + 1);
    else if (change.startsWith('add:')) out[change.slice(4)] = `x${k}-${seq}`;
    else if (change === 'rename:status:state') {
      out['state'] = out['status'];
      delete out['status'];
    } else if (change === 'promote:battery') out['battery'] = 2 ** 40 + seq;
    else if (change === 'drop:note') delete out['note'];
    else if (change === 'promote:humidity') out['humidity'] = seq + 0.1;
  }
  return out;
}

/**
 * What is wrong with `row` (as a reader read it, under the schema all `changes` leave) for a row
 * sent after `applied` of them; empty when every rule holds: columns added later null, values the
 * change allowed exact, renamed columns under the new name, dropped ones gone.
 */
export function ruleErrors(row: Record<string, unknown>, applied: number, changes: number): string[] {
  const seq = Number(row['seq']);
  const sent = shapeRow({ seq, status: '?', note: null, battery: null, humidity: null }, applied);
  const errors: string[] = [];
  const expect = (what: string, actual: unknown, wanted: unknown) => {
    if (actual !== wanted) errors.push(`seq ${seq}: ${what} is ${String(actual)}, not ${String(wanted)}`);
  };
  const pos = row['pos'] as Record<string, unknown> | null | undefined;
  if (changes > 0) {
    if (applied === 0) expect('pos', pos, null);
    else expect('pos.lat', pos?.['lat'], seq / 4);
  }
  for (let k = 1; k < changes; k++) {
    const change = schemaChange(k);
    if (change.startsWith('add:pos.')) {
      const name = change.slice(8);
      if (pos != null) expect(`pos.${name}`, pos[name] == null ? null : Number(pos[name]), k < applied ? (sent['pos'] as Record<string, number>)[name] : null);
    } else if (change.startsWith('add:')) expect(change.slice(4), row[change.slice(4)], k < applied ? sent[change.slice(4)] : null);
    else if (change === 'rename:status:state') {
      expect('has status', 'status' in row, false);
      expect('state is text', typeof row['state'], 'string');
    } else if (change === 'promote:battery' && k < applied) expect('battery', Number(row['battery']), 2 ** 40 + seq);
    else if (change === 'drop:note') expect('has note', 'note' in row, false);
    else if (change === 'promote:humidity' && k < applied) expect('humidity', row['humidity'], seq + 0.1);
  }
  return errors;
}
