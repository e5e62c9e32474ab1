import { usageError } from './errors.ts';
import { size } from './human.ts';

/** One element of the input, its bytes exactly as written (outer whitespace dropped). */
export interface InputRow {
  readonly bytes: Buffer;
  /** 1-based position among the input's rows. */
  readonly index: number;
  /** 1-based line where the row starts. */
  readonly line: number;
}

export interface ScanOptions {
  /** A row longer than this is refused as soon as it passes the mark, before it is held whole. */
  readonly maxRowBytes: number;
  /** The input's name in messages (`batch.json`, `stdin`). */
  readonly source: string;
}

const enum Byte {
  Tab = 0x09,
  Newline = 0x0a,
  Return = 0x0d,
  Space = 0x20,
  Quote = 0x22,
  Comma = 0x2c,
  OpenBracket = 0x5b,
  Backslash = 0x5c,
  CloseBracket = 0x5d,
  OpenBrace = 0x7b,
  CloseBrace = 0x7d,
}

const isSpace = (b: number) => b === Byte.Space || b === Byte.Newline || b === Byte.Tab || b === Byte.Return;
const BOM = [0xef, 0xbb, 0xbf];

type State =
  /** Before the first byte that says which form the input has. */
  | 'start'
  /** Between rows: in an array after `[` or `,`; in NDJSON anywhere between values. */
  | 'before'
  | 'value'
  /** Array only: after a row, waiting for `,` or `]`. */
  | 'after'
  /** Array only: after the closing `]`. */
  | 'end';

const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * Reads a JSON array (`[{...}, {...}]`) or NDJSON (one value per line; any whitespace between
 * values will do) from a stream of bytes and yields each row's bytes unchanged, holding at most
 * one row and one read chunk. Each row is checked to be UTF-8 JSON, so a bad row is named
 * here, by its position, rather than refused with its whole batch by the API. Objects are not
 * required: the intake reports other values as rejected rows.
 */
export async function* scanRows(input: AsyncIterable<Uint8Array>, options: ScanOptions): AsyncGenerator<InputRow> {
  let state: State = 'start';
  let form: 'array' | 'ndjson' = 'ndjson';
  let line = 1;
  let index = 0;
  let bomAt = 0;

  // The row being read: its pieces from earlier chunks, its size so far, where it began.
  let pieces: Buffer[] = [];
  let held = 0;
  let rowLine = 0;
  let depth = 0;
  let inString = false;
  let escaped = false;
  // A scalar at the top level (`42`, `true`) ends at whitespace or punctuation, not a bracket.
  let scalar = false;

  const fail = (reason: string, at = line) => usageError(`${options.source} line ${at}: ${reason}`);
  const tooLong = () =>
    fail(
      `row ${index + 1} is over ${size(options.maxRowBytes)}, more than one request may carry; split it into smaller rows`,
      rowLine,
    );

  function finish(chunk: Buffer, start: number, end: number): InputRow {
    const tail = chunk.subarray(start, end);
    const bytes = pieces.length === 0 ? tail : Buffer.concat([...pieces, tail], held + tail.length);
    pieces = [];
    held = 0;
    if (bytes.length > options.maxRowBytes) throw tooLong();
    index += 1;
    checkJson(bytes, index, rowLine);
    return { bytes, index, line: rowLine };
  }

  function checkJson(bytes: Buffer, n: number, at: number): void {
    let text: string;
    try {
      text = decoder.decode(bytes);
    } catch {
      throw fail(`row ${n} is not valid UTF-8`, at);
    }
    try {
      JSON.parse(text);
    } catch (error) {
      throw fail(`row ${n} is not valid JSON (${error instanceof Error ? error.message : String(error)})`, at);
    }
  }

  for await (const piece of input) {
    const chunk = Buffer.isBuffer(piece) ? piece : Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength);
    let start = 0;
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i]!;
      switch (state) {
        case 'start':
          if (bomAt < BOM.length && b === BOM[bomAt] && line === 1) {
            bomAt++;
            continue;
          }
          if (isSpace(b)) break;
          if (b === Byte.OpenBracket) {
            form = 'array';
            state = 'before';
            break;
          }
          form = 'ndjson';
          state = 'before';
          i--; // read this byte again as the first value's
          continue;
        case 'before':
          if (isSpace(b)) break;
          if (form === 'array' && b === Byte.CloseBracket) {
            if (index > 0) throw fail('a comma before "]" (no row follows it)');
            state = 'end';
            break;
          }
          if (b === Byte.Comma || b === Byte.CloseBracket || b === Byte.CloseBrace) {
            throw fail(`unexpected "${String.fromCharCode(b)}" where a row should start`);
          }
          state = 'value';
          start = i;
          rowLine = line;
          depth = 0;
          inString = false;
          escaped = false;
          scalar = b !== Byte.OpenBrace && b !== Byte.OpenBracket && b !== Byte.Quote;
          if (!scalar) {
            if (b === Byte.Quote) inString = true;
            else depth = 1;
            break;
          }
          continue; // a scalar's first byte is its own; nothing to track
        case 'value': {
          if (inString) {
            if (escaped) escaped = false;
            else if (b === Byte.Backslash) escaped = true;
            else if (b === Byte.Quote) {
              inString = false;
              if (depth === 0) {
                yield finish(chunk, start, i + 1);
                state = form === 'array' ? 'after' : 'before';
              }
            }
            break;
          }
          if (scalar) {
            if (isSpace(b) || b === Byte.Comma || b === Byte.CloseBracket || b === Byte.OpenBrace || b === Byte.OpenBracket) {
              yield finish(chunk, start, i);
              state = form === 'array' ? 'after' : 'before';
              i--; // the delimiter belongs to what follows
              continue;
            }
            break;
          }
          if (b === Byte.Quote) inString = true;
          else if (b === Byte.OpenBrace || b === Byte.OpenBracket) depth++;
          else if (b === Byte.CloseBrace || b === Byte.CloseBracket) {
            depth--;
            if (depth === 0) {
              yield finish(chunk, start, i + 1);
              state = form === 'array' ? 'after' : 'before';
            }
          }
          break;
        }
        case 'after':
          if (isSpace(b)) break;
          if (b === Byte.Comma) state = 'before';
          else if (b === Byte.CloseBracket) state = 'end';
          else throw fail(`expected "," or "]" after row ${index}, found "${String.fromCharCode(b)}"`);
          break;
        case 'end':
          if (!isSpace(b)) throw fail('text after the closing "]"');
          break;
      }
      if (b === Byte.Newline) line++;
    }
    if (state === 'value') {
      const rest = chunk.subarray(start);
      held += rest.length;
      if (held > options.maxRowBytes) throw tooLong();
      pieces.push(rest);
    }
  }

  if (state === 'value') {
    if (!scalar || inString) throw fail(`row ${index + 1} is cut short: the input ends inside it`, rowLine);
    const last = Buffer.concat(pieces, held);
    pieces = [];
    yield finish(last, 0, last.length);
    state = form === 'array' ? 'after' : 'before';
  }
  if (form === 'array' && (state === 'before' || state === 'after')) throw fail('the array is not closed: "]" is missing at the end');
}
