import { describe, expect, it } from 'vitest';
import { CliError } from './errors.ts';
import { type InputRow, scanRows } from './json-input.ts';

/** The text fed in chunks of `chunk` bytes, so rows straddle chunk edges. */
async function* chunks(text: string | Buffer, chunk: number): AsyncGenerator<Buffer> {
  const bytes = Buffer.isBuffer(text) ? text : Buffer.from(text);
  for (let i = 0; i < bytes.length; i += chunk) yield bytes.subarray(i, i + chunk);
}

async function rows(text: string | Buffer, chunk = 3, maxRowBytes = 1024): Promise<InputRow[]> {
  const out: InputRow[] = [];
  for await (const row of scanRows(chunks(text, chunk), { maxRowBytes, source: 'in.json' })) out.push(row);
  return out;
}

const texts = (found: InputRow[]) => found.map((row) => row.bytes.toString());

async function refusal(text: string | Buffer, maxRowBytes = 1024): Promise<string> {
  const error = await rows(text, 4, maxRowBytes).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CliError);
  expect((error as CliError).kind).toBe('usage');
  return (error as CliError).message;
}

describe('scanRows', () => {
  it('yields the elements of a JSON array with their bytes unchanged, at any chunk size', async () => {
    const text = '[ {"x": 1, "s": "a,]}\\"b"} ,\n{"x":12345678901234567890}, [1,2] ,"s", 7.50, null ]\n';
    const expected = ['{"x": 1, "s": "a,]}\\"b"}', '{"x":12345678901234567890}', '[1,2]', '"s"', '7.50', 'null'];
    for (const chunk of [1, 2, 3, 7, 1000]) expect(texts(await rows(text, chunk))).toEqual(expected);
  });

  it('reads NDJSON, blank lines and CRLF included, and values spread over lines', async () => {
    const text = '\ufeff{"x":1}\r\n\r\n{"x":2,\n "y":[1,\n2]}\n  {"x":3}  \n42\ntrue\n';
    const found = await rows(text);
    expect(texts(found)).toEqual(['{"x":1}', '{"x":2,\n "y":[1,\n2]}', '{"x":3}', '42', 'true']);
    expect(found.map((row) => [row.index, row.line])).toEqual([
      [1, 1],
      [2, 3],
      [3, 6],
      [4, 7],
      [5, 8],
    ]);
  });

  it('keeps multi-byte UTF-8 split across chunks intact', async () => {
    const found = await rows('[{"who":"Zoë 北"}]', 1);
    expect(texts(found)).toEqual(['{"who":"Zoë 北"}']);
  });

  it('yields nothing for an empty array or empty input', async () => {
    expect(await rows('[]')).toEqual([]);
    expect(await rows(' [ \n ] \n')).toEqual([]);
    expect(await rows('')).toEqual([]);
    expect(await rows('\n\n')).toEqual([]);
  });

  it('names the line and row of malformed input', async () => {
    expect(await refusal('[{"x":1},\n{"x":}]')).toMatch(/^in\.json line 2: row 2 is not valid JSON/);
    expect(await refusal('{"x":1}\n{"x":2')).toBe('in.json line 2: row 2 is cut short: the input ends inside it');
    expect(await refusal('[{"x":1}')).toBe('in.json line 1: the array is not closed: "]" is missing at the end');
    expect(await refusal('[{"x":1},]')).toBe('in.json line 1: a comma before "]" (no row follows it)');
    expect(await refusal('[{"x":1} {"x":2}]')).toBe('in.json line 1: expected "," or "]" after row 1, found "{"');
    expect(await refusal('[{"x":1}] x')).toBe('in.json line 1: text after the closing "]"');
    expect(await refusal('{"x":1},{"x":2}')).toBe('in.json line 1: unexpected "," where a row should start');
    expect(await refusal(Buffer.from([0x5b, 0x22, 0xff, 0x22, 0x5d]))).toBe('in.json line 1: row 1 is not valid UTF-8');
  });

  it('refuses a row over the limit before holding it whole', async () => {
    expect(await rows(`[${'"' + 'a'.repeat(8) + '"'}]`, 4, 10)).toHaveLength(1);
    expect(await refusal(`{"a":1}\n\n${'"' + 'a'.repeat(9) + '"'}`, 10)).toBe(
      'in.json line 3: row 2 is over 10 B, more than one request may carry; split it into smaller rows',
    );
  });
});
