import { createHash } from 'node:crypto';
import { SEND_BODY_LIMIT } from '@tablemere/contracts';
import { describe, expect, it } from 'vitest';
import { type Batch, batchId, checkBatchId, maxRowBytes, packBatches } from './batches.ts';
import { CliError } from './errors.ts';
import { scanRows } from './json-input.ts';

async function* bytesOf(text: Buffer, chunk = 64 * 1024): AsyncGenerator<Buffer> {
  for (let i = 0; i < text.length; i += chunk) yield text.subarray(i, i + chunk);
}

async function pack(input: Buffer, maxBatchBytes = SEND_BODY_LIMIT, given?: string): Promise<Batch[]> {
  const rows = scanRows(bytesOf(input), { maxRowBytes: maxRowBytes(maxBatchBytes), source: 'in' });
  const out: Batch[] = [];
  for await (const batch of packBatches(rows, { maxBatchBytes, ...(given ? { batchId: given } : {}) })) out.push(batch);
  return out;
}

/** A row `{"p":"aaa…"}` of exactly `bytes` bytes. */
const row = (bytes: number, fill = 'a') => `{"p":"${fill.repeat(bytes - 8)}"}`;

describe('packBatches', () => {
  it('fills a batch to exactly 16 MiB and starts the next with one more byte', async () => {
    // Two rows plus brackets and a comma: 2 + a + 1 + b = 16 MiB exactly.
    const a = 8 * 1024 * 1024;
    const b = SEND_BODY_LIMIT - 3 - a;
    const exact = await pack(Buffer.from(`${row(a)}\n${row(b)}\n`));
    expect(exact.map((batch) => [batch.body.length, batch.rows])).toEqual([[SEND_BODY_LIMIT, 2]]);
    JSON.parse(exact[0]!.body.toString());

    const over = await pack(Buffer.from(`${row(a)}\n${row(b + 1)}\n`));
    expect(over.map((batch) => [batch.body.length, batch.rows, batch.firstRow])).toEqual([
      [a + 2, 1, 1],
      [b + 1 + 2, 1, 2],
    ]);
  });

  it('takes a single row of 16 MiB minus the brackets, and refuses one byte more with a clear reason', async () => {
    const largest = await pack(Buffer.from(`[${row(SEND_BODY_LIMIT - 2)}]`));
    expect(largest.map((batch) => batch.body.length)).toEqual([SEND_BODY_LIMIT]);

    const error = await pack(Buffer.from(`{"x":1}\n${row(SEND_BODY_LIMIT - 1)}\n`)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(CliError);
    expect((error as CliError).kind).toBe('usage');
    expect((error as CliError).message).toBe('in line 2: row 2 is over 16.0 MiB, more than one request may carry; split it into smaller rows');
  });

  it('keeps every row in order and byte for byte, as JSON array bodies within the limit', async () => {
    const lines = Array.from({ length: 500 }, (_, i) => `{"i":${i},"big":12345678901234567890,"s":"${'x'.repeat(i % 37)}"}`);
    const batches = await pack(Buffer.from(lines.join('\n')), 1000);
    expect(batches.length).toBeGreaterThan(10);
    for (const batch of batches) expect(batch.body.length).toBeLessThanOrEqual(1000);
    // Closing a batch only when the next row does not fit: no two neighbours could have merged.
    for (let i = 1; i < batches.length; i++) expect(batches[i - 1]!.body.length + batches[i]!.body.length - 1).toBeGreaterThan(1000);
    const rejoined = batches.flatMap((batch) => splitTopLevel(batch.body.toString()));
    expect(rejoined).toEqual(lines);
    expect(batches.map((batch) => batch.part)).toEqual(batches.map((_, i) => i + 1));
  });

  it('names batches by content and part, the same on every run', async () => {
    const input = Buffer.from(Array.from({ length: 50 }, (_, i) => row(100, String.fromCharCode(97 + (i % 3)))).join('\n'));
    const first = await pack(input, 1000);
    const again = await pack(input, 1000);
    expect(again.map((batch) => batch.id)).toEqual(first.map((batch) => batch.id));
    expect(new Set(first.map((batch) => batch.id)).size).toBe(first.length);
    const sha = createHash('sha256').update(first[0]!.body).digest('hex');
    expect(first[0]!.id).toBe(`${sha.slice(0, 24)}-1`);

    const named = await pack(input, 1000, 'nightly.2026-09-21');
    expect(named.map((batch) => batch.id)).toEqual(first.map((_, i) => (i === 0 ? 'nightly.2026-09-21' : `nightly.2026-09-21-${i + 1}`)));
  });

  it('--batch-id ID names a send that is one batch exactly ID', async () => {
    const one = await pack(Buffer.from('{"x":1}\n{"x":2}\n'), SEND_BODY_LIMIT, 'run-7');
    expect(one.map((batch) => batch.id)).toEqual(['run-7']);
  });

  it('refuses a --batch-id whose later parts would pass 128 characters, naming the part', async () => {
    const id = 'x'.repeat(127);
    expect(batchId(Buffer.from('[]'), 1, id)).toBe(id);
    expect(() => batchId(Buffer.from('[]'), 2, id)).toThrow(/part 2 would be named x+-2, longer than 128 characters/);
  });

  it('gives equal bodies at different places different ids', () => {
    const body = Buffer.from('[{"x":1}]');
    expect(batchId(body, 1)).not.toBe(batchId(body, 2));
  });
});

describe('checkBatchId', () => {
  it('accepts any Idempotency-Key and refuses anything else', () => {
    expect(checkBatchId('run:2026-09-21T12.00_a')).toBe('run:2026-09-21T12.00_a');
    expect(checkBatchId('x'.repeat(128))).toBe('x'.repeat(128));
    for (const bad of ['', 'a b', 'a/b', 'é', 'x'.repeat(129)]) expect(() => checkBatchId(bad)).toThrow(CliError);
  });
});

/** The top-level elements of a JSON array's text, without parsing them (rows hold no brackets in strings here). */
function splitTopLevel(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 1;
  for (let i = 1; i < text.length - 1; i++) {
    const c = text[i];
    if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') depth--;
    else if (c === ',' && depth === 0) {
      out.push(text.slice(start, i));
      start = i + 1;
    }
  }
  out.push(text.slice(start, text.length - 1));
  return out;
}
