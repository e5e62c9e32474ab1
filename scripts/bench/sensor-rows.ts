/** Rows shaped like a sensor sink's, for the append, roll, upkeep and convert benchmarks. */

import { mulberry32 } from '../../tests/support/random.ts';

export const COLUMNS = [
  { name: 'seq', type: 'long', required: true },
  { name: 'device', type: 'string', required: true },
  { name: 'ts', type: 'timestamptz', required: true },
  { name: 'temperature', type: 'double' },
  { name: 'humidity', type: 'float' },
  { name: 'battery', type: 'int' },
  { name: 'status', type: 'string' },
  { name: 'note', type: 'string' },
] as const;

/** COLUMNS as an Iceberg schema (JSON), field ids from 1 in order. */
export const SENSOR_SCHEMA = {
  type: 'struct' as const,
  fields: COLUMNS.map((column, i) => ({ id: i + 1, name: column.name, required: 'required' in column && column.required, type: column.type })),
};

const STATUSES = ['ok', 'ok', 'ok', 'degraded', 'offline'];
const NOTES = ['', 'door open', 'fan high', 'calibrated', 'restarted', 'low signal'];

/**
 * Sensor NDJSON (the append benchmark's) in pieces of 1,000 rows, until about `bytes`; the
 * same seed gives the same rows. Half the notes are null, timestamps carry microseconds.
 */
export function* sensorRows(seed: number, bytes: number): Generator<{ text: string; rows: number }> {
  const random = mulberry32(seed);
  const start = Date.UTC(2026, 0, 1);
  let written = 0;
  let rows = 0;
  while (written < bytes) {
    const lines: string[] = [];
    for (let i = 0; i < 1000; i++, rows++) {
      const micros = String(Math.floor(random() * 1e6)).padStart(6, '0');
      const ts = new Date(start + rows * 60_000).toISOString().replace(/\.\d{3}Z$/, `.${micros}Z`);
      const row: Record<string, unknown> = {
        seq: rows,
        device: `dev-${String(Math.floor(random() * 5000)).padStart(5, '0')}`,
        ts,
        temperature: Math.round((random() * 60 - 20) * 100) / 100,
        humidity: Math.round(random() * 1000) / 10,
        battery: Math.floor(random() * 101),
        status: STATUSES[Math.floor(random() * STATUSES.length)],
        note: random() < 0.5 ? null : NOTES[Math.floor(random() * NOTES.length)],
      };
      lines.push(JSON.stringify(row));
    }
    const text = `${lines.join('\n')}\n`;
    written += Buffer.byteLength(text);
    yield { text, rows: 1000 };
  }
}

/** A JSON array of sensor rows of about `bytes` bytes; `seq` continues from `start`. */
export function batchBody(start: number, bytes: number): { body: string; rows: number } {
  const parts: string[] = [];
  let size = 2;
  let seq = start;
  const base = Date.parse('2026-09-21T12:00:00Z');
  while (size < bytes - 200) {
    const row = JSON.stringify({
      seq,
      device: `dev-${(seq * 7919) % 5000}`,
      ts: new Date(base + seq * 250).toISOString(),
      temperature: Math.round(((seq * 37) % 4000) / 10 - 50) / 1 + 0.25,
      humidity: ((seq * 13) % 1000) / 10,
      battery: (seq * 17) % 101,
      status: STATUSES[seq % STATUSES.length],
      note: NOTES[seq % NOTES.length],
    });
    parts.push(row);
    size += row.length + 1;
    seq++;
  }
  return { body: `[${parts.join(',')}]`, rows: parts.length };
}
