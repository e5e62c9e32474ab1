/** Rows shaped like a sensor sink's, for the roll and upkeep benchmarks. */

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

const STATUSES = ['ok', 'ok', 'ok', 'degraded', 'offline'];
const NOTES = ['', 'door open', 'fan high', 'calibrated', 'restarted', 'low signal'];

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
