/**
 * The control routes' JSON bodies: how deep they may nest. Their deepest real body (a table's
 * columns with nested types) is a few levels; the limit leaves room for structs of structs
 * while keeping every walk of a parsed body (the text guard, zod, secure-json-parse) short.
 */
export const MAX_JSON_NESTING = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;

/**
 * The offset where `text` first opens an object or array deeper than `limit`, or undefined.
 * One pass over the characters, strings skipped, before anything parses the text: a body
 * nested tens of thousands of levels is refused without building it. Brackets need not
 * balance here; the parser judges the syntax.
 */
export function nestingPastLimit(text: string, limit: number): number | undefined {
  let depth = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      for (i++; i < n; i++) {
        const s = text.charCodeAt(i);
        if (s === BACKSLASH) i++;
        else if (s === QUOTE) break;
      }
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > limit) return i;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
  return undefined;
}
