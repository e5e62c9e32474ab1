import { randomInt } from 'node:crypto';
import { SEND_NESTING_LIMIT } from '@tablemere/contracts';
import { describe, expect, it } from 'vitest';
import { scanBatch, scanNdjson, type ScanOutcome } from './scan.ts';

const scan = (text: string | Buffer, limit = 1000): ScanOutcome => scanBatch(Buffer.isBuffer(text) ? Buffer.from(text) : Buffer.from(text, 'utf8'), limit);

function lines(text: string): string[] {
  const outcome = scan(text);
  if (!outcome.ok) throw new Error(`${outcome.error.kind}: ${outcome.error.detail}`);
  return outcome.batch.ndjson.length === 0 ? [] : outcome.batch.ndjson.toString('utf8').split('\n');
}

/** Whether JSON.parse takes it: the reference for validity. */
function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

describe('scanBatch', () => {
  it('keeps every object byte for byte, one per line, and drops the separators', () => {
    const body = '[{"x": 1, "who": "north"}, {"x": 2}]';
    const outcome = scan(body);
    expect(outcome.ok && outcome.batch.ndjson.toString()).toBe('{"x": 1, "who": "north"}\n{"x": 2}');
    expect(outcome.ok && outcome.batch.ndjson.length).toBe(33);
  });

  it('leaves the objects of a compact body where they are: the NDJSON is the body without its brackets', () => {
    const body = Buffer.from('[{"x":1},{"x":2,"s":"a,b"},{"x":3}]');
    const outcome = scanBatch(body, 10);
    expect(outcome.ok && outcome.batch.ndjson.toString()).toBe('{"x":1}\n{"x":2,"s":"a,b"}\n{"x":3}');
    expect(outcome.ok && outcome.batch.ndjson.byteOffset - body.byteOffset).toBe(1);
  });

  it('keeps odd whitespace, escapes, number spellings and raw unicode inside elements', () => {
    const elements = ['{ "a" :\t"\\u00e9\\n\\"" ,"b":[ 1.50e+3 , -0 ]\r\n}', '{"é": "日本", "big": 123456789012345678901234567890}', '{}', '{"n":{"m":{"o":[[],{}]}}}'];
    const body = ` \n[ ${elements.join(' ,\n\t')} ] \r\n`;
    expect(lines(body)).toEqual(elements.map((e) => e.replace('\r\n', '  ')));
  });

  it('puts a pretty-printed object on one line, a space for each line break, same length', () => {
    const element = '{\n  "a": 1,\r\n  "b": [\n    "x\\ny"\n  ]\n}';
    expect(lines(`[\n${element}\n]`)).toEqual([element.replace(/[\r\n]/g, ' ')]);
    expect(JSON.parse(element.replace(/[\r\n]/g, ' '))).toEqual(JSON.parse(element));
  });

  it('keeps elements that are not objects as lines too, counting them and listing their positions', () => {
    const outcome = scan('[1, {"a":1}, "s", null, [ {"b":2},\n{"d":4} ], {"c":3}, true]');
    expect(outcome).toEqual({
      ok: true,
      batch: { ndjson: expect.any(Buffer), objects: 2, nonObjects: 5, nonObjectIndexes: [0, 2, 3, 4, 6] },
    });
    expect(outcome.ok && outcome.batch.ndjson.toString()).toBe('1\n{"a":1}\n"s"\nnull\n[ {"b":2}, {"d":4} ]\n{"c":3}\ntrue');
  });

  it('stores a batch with no object at all, line for line', () => {
    expect(lines('[1,"a"]')).toEqual(['1', '"a"']);
  });

  it('lists at most reasonsLimit positions but counts every element that is not an object', () => {
    const outcome = scan(`[${Array.from({ length: 50 }, () => '0').join(',')}, {}]`, 10);
    expect(outcome.ok && outcome.batch).toMatchObject({ objects: 1, nonObjects: 50, nonObjectIndexes: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9] });
  });

  it('answers an empty array as no element', () => {
    expect(scan(' [ ] ')).toMatchObject({ ok: true, batch: { objects: 0, nonObjects: 0 } });
    expect(scan('[]')).toMatchObject({ ok: true, batch: { objects: 0, nonObjects: 0 } });
  });

  it('tells JSON that is not an array from what is not JSON', () => {
    for (const text of ['{"a": 1}', '"text"', '42', 'null', ' true ']) expect(scan(text), text).toMatchObject({ ok: false, error: { kind: 'not_an_array' } });
    for (const text of ['', '   ', '{"a": 1', '{"a": 1} x', 'nul', '[1 2]', 'x']) expect(scan(text), text).toMatchObject({ ok: false, error: { kind: 'invalid_json' } });
  });

  it('refuses what JSON.parse refuses, with the offset of the problem', () => {
    const bad = [
      '[{"a": 1},]',
      '[,{}]',
      '[{"a" 1}]',
      '[{"a": 1,}]',
      '[{a: 1}]',
      "[{'a': 1}]",
      '[{"a": 01}]',
      '[{"a": 1.}]',
      '[{"a": .5}]',
      '[{"a": 1e}]',
      '[{"a": +1}]',
      '[{"a": NaN}]',
      '[{"a": "\\x"}]',
      '[{"a": "\\u12g4"}]',
      '[{"a": "tab\there"}]',
      '[{"a": [1, 2}]',
      '[{"a": {"b": 1]}]',
      '[{"a": 1}',
      '[{"a": 1}] ]',
      '[{"a": "unterminated]',
      '[{"a": tru}]',
    ];
    for (const text of bad) {
      expect(parses(text), text).toBe(false);
      expect(scan(text), text).toMatchObject({ ok: false, error: { kind: 'invalid_json' } });
    }
    expect(scan('[{"a": 1},  ]')).toMatchObject({ ok: false, error: { offset: 12 } });
  });

  it('refuses bytes that are not UTF-8, even inside a string', () => {
    const body = Buffer.concat([Buffer.from('[{"a": "'), Buffer.from([0xc3, 0x28]), Buffer.from('"}]')]);
    expect(scan(body)).toMatchObject({ ok: false, error: { kind: 'invalid_json', detail: 'the body is not UTF-8' } });
  });

  it(`takes nesting up to ${SEND_NESTING_LIMIT} levels and refuses deeper`, () => {
    const nested = (depth: number) => `[${'{"a":'.repeat(depth - 1)}{}${'}'.repeat(depth - 1)}]`;
    expect(scan(nested(SEND_NESTING_LIMIT))).toMatchObject({ ok: true, batch: { objects: 1 } });
    expect(scan(nested(SEND_NESTING_LIMIT + 1))).toMatchObject({ ok: false, error: { kind: 'invalid_json', detail: expect.stringMatching(/nesting/) } });
  });

  it('agrees with JSON.parse on random documents and their mutations', () => {
    const atoms = ['0', '-1.5e-3', '12345678901234567890', 'true', 'false', 'null', '"s"', '"\\u00e9\\t"', '"日本"', '""'];
    const value = (depth: number): string => {
      const pick = randomInt(depth > 3 ? 1 : 3);
      if (pick === 0) return atoms[randomInt(atoms.length)]!;
      const n = randomInt(4);
      const ws = () => [' ', '', '\n', '\t '][randomInt(4)]!;
      if (pick === 1) return `[${Array.from({ length: n }, () => ws() + value(depth + 1) + ws()).join(',')}]`;
      return `{${Array.from({ length: n }, (_, i) => `${ws()}"k${i}"${ws()}:${ws()}${value(depth + 1)}`).join(',')}}`;
    };
    const mutate = (text: string) => {
      const at = randomInt(text.length);
      const replacement = ['', ',', '}', ']', '"', ' ', '{', '[', 'x', '\\'][randomInt(10)]!;
      return text.slice(0, at) + replacement + text.slice(at + 1);
    };
    for (let i = 0; i < 3000; i++) {
      const elements = Array.from({ length: randomInt(5) }, () => (randomInt(3) === 0 ? value(1) : `{"x":${value(1)}}`));
      const doc = `[${elements.join(', ')}]`;
      const text = i % 2 === 0 ? doc : mutate(doc);
      const outcome = scan(text);
      if (!parses(text)) {
        expect(outcome.ok, text).toBe(false);
        continue;
      }
      const parsed: unknown = JSON.parse(text);
      if (!Array.isArray(parsed)) {
        expect(outcome, text).toMatchObject({ ok: false, error: { kind: 'not_an_array' } });
        continue;
      }
      if (!outcome.ok) throw new Error(`refused valid JSON ${text}: ${outcome.error.detail}`);
      const objects = parsed.filter((e) => typeof e === 'object' && e !== null && !Array.isArray(e));
      expect(outcome.batch.objects, text).toBe(objects.length);
      expect(outcome.batch.nonObjects, text).toBe(parsed.length - objects.length);
      const got = outcome.batch.ndjson.length === 0 ? [] : outcome.batch.ndjson.toString().split('\n').map((line) => JSON.parse(line) as unknown);
      expect(got, text).toEqual(parsed);
    }
  });
});

describe('scanNdjson', () => {
  const ndjson = (text: string) => scanNdjson(Buffer.from(text, 'utf8'), 1000);

  it('stores the same bytes as an array of the same elements: blank lines, blanks around values, CRLF and a final line break dropped', () => {
    const elements = ['{ "a" :\t"\\u00e9\\n" ,"b":[ 1.50e+3 , -0 ]}', '{"é": "日本", "big": 123456789012345678901234567890}', '7', '{}'];
    const outcome = ndjson(`\n  ${elements[0]}  \r\n\n${elements[1]}\n\t${elements[2]}\r\n${elements[3]}\n\n`);
    expect(outcome.ok && outcome.batch.ndjson.toString()).toBe(elements.join('\n'));
    expect(outcome.ok && outcome.batch.ndjson.toString()).toBe(lines(`[${elements.join(',')}]`).join('\n'));
    expect(outcome).toMatchObject({ ok: true, batch: { objects: 3, nonObjects: 1, nonObjectIndexes: [2], nonObjectLines: [5] } });
  });

  it('takes a body without a final line break, and counts a body of blank lines as no element', () => {
    expect(ndjson('{"x":1}\n{"x":2}')).toMatchObject({ ok: true, batch: { objects: 2 } });
    expect(ndjson(' \n\r\n')).toMatchObject({ ok: true, batch: { objects: 0, nonObjects: 0 } });
  });

  it('names the line of a bad value: a syntax error, two values on a line, a value across lines, deep nesting', () => {
    expect(ndjson('{"x":1}\n\n{"x":}\n')).toMatchObject({ ok: false, error: { kind: 'invalid_json', line: 3, offset: 14 } });
    expect(ndjson('{"x":1}\n{"x":2} {"x":3}\n')).toMatchObject({ ok: false, error: { line: 2, detail: expect.stringMatching(/after the value/) } });
    expect(ndjson('{"x":1}\n{"x":\n2}\n')).toMatchObject({ ok: false, error: { line: 2, offset: 13, detail: expect.stringMatching(/end of its line/) } });
    expect(ndjson('{"x":1}\n{"x":1\n{"x":2}\n')).toMatchObject({ ok: false, error: { line: 2, detail: expect.stringMatching(/end of its line/) } });
    expect(ndjson(`{}\n${'['.repeat(SEND_NESTING_LIMIT + 1)}${']'.repeat(SEND_NESTING_LIMIT + 1)}`)).toMatchObject({ ok: false, error: { line: 2, detail: expect.stringMatching(/nesting/) } });
    expect(scanNdjson(Buffer.from([0x7b, 0x7d, 0x0a, 0xff]), 10)).toMatchObject({ ok: false, error: { kind: 'invalid_json', detail: 'the body is not UTF-8' } });
  });
});
