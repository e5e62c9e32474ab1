/*
 * The send route's check of a JSON array body, for large bodies at several GB/s: what
 * scanBatch (src/domain/intake/scan.ts) does, without its error messages. On a body it takes,
 * the answer and the packed NDJSON are byte for byte scanBatch's; on anything else (invalid
 * JSON, not an array, nesting past the limit, more elements than it keeps track of) it
 * leaves the body untouched and says no, and scanBatch itself runs to name the fault. The
 * body must be UTF-8 already (the caller checks it first).
 *
 * Two stages per 64-byte block, as simdjson does: stage 1 turns the block into bit masks
 * (quotes not escaped, inside-string bytes, structural characters, the first byte of each
 * number or literal) with SSE2 compares; stage 2 walks the tokens those masks leave, in
 * order, through the JSON grammar with an explicit stack. String bodies are never walked
 * byte by byte: only their escapes are looked at.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* scan.ts's MAX_NESTING inside an element, plus the array around it. */
#define MAX_DEPTH 513

/* out[]: what tm_scan_array answers, the positions of non-objects after OUT_INDEXES. */
enum { OUT_FIRST, OUT_WRITE, OUT_OBJECTS, OUT_NON_OBJECTS, OUT_INDEXES };

typedef struct {
  uint64_t quote, backslash, op, ws, ctrl, line;
} classes;

static inline void classify(const uint8_t *p, classes *c) {
#if defined(__SSE2__)
  uint64_t quote = 0, backslash = 0, op = 0, ws = 0, ctrl = 0, line = 0;
  for (int j = 0; j < 4; j++) {
    const __m128i v = _mm_loadu_si128((const __m128i *)(p + 16 * j));
#define EQ(x, ch) _mm_cmpeq_epi8((x), _mm_set1_epi8(ch))
#define BITS(x) ((uint64_t)(uint16_t)_mm_movemask_epi8(x) << (16 * j))
    /* '[' | 0x20 is '{' and ']' | 0x20 is '}': two compares for four brackets. */
    const __m128i folded = _mm_or_si128(v, _mm_set1_epi8(0x20));
    const __m128i lf = _mm_or_si128(EQ(v, '\n'), EQ(v, '\r'));
    quote |= BITS(EQ(v, '"'));
    backslash |= BITS(EQ(v, '\\'));
    op |= BITS(_mm_or_si128(_mm_or_si128(EQ(folded, '{'), EQ(folded, '}')), _mm_or_si128(EQ(v, ':'), EQ(v, ','))));
    ws |= BITS(_mm_or_si128(_mm_or_si128(EQ(v, ' '), EQ(v, '\t')), lf));
    ctrl |= BITS(_mm_cmpeq_epi8(_mm_subs_epu8(v, _mm_set1_epi8(0x1f)), _mm_setzero_si128()));
    line |= BITS(lf);
#undef EQ
#undef BITS
  }
  *c = (classes){quote, backslash, op, ws, ctrl, line};
#else
  memset(c, 0, sizeof *c);
  for (int i = 0; i < 64; i++) {
    const uint8_t b = p[i];
    const uint64_t bit = (uint64_t)1 << i;
    if (b == '"') c->quote |= bit;
    if (b == '\\') c->backslash |= bit;
    if (b == '{' || b == '}' || b == '[' || b == ']' || b == ':' || b == ',') c->op |= bit;
    if (b == ' ' || b == '\t' || b == '\n' || b == '\r') c->ws |= bit;
    if (b < 0x20) c->ctrl |= bit;
    if (b == '\n' || b == '\r') c->line |= bit;
  }
#endif
}

/* Bit i set: an odd number of set bits at or below i. */
static inline uint64_t prefix_xor(uint64_t x) {
  x ^= x << 1;
  x ^= x << 2;
  x ^= x << 4;
  x ^= x << 8;
  x ^= x << 16;
  x ^= x << 32;
  return x;
}

static uint8_t IS_DIGIT[256], IS_HEX[256], SIMPLE_ESCAPE[256], ENDS_SCALAR[256];

static void init_tables(void) {
  for (int c = '0'; c <= '9'; c++) IS_DIGIT[c] = IS_HEX[c] = 1;
  for (int c = 'a'; c <= 'f'; c++) IS_HEX[c] = IS_HEX[c - 32] = 1;
  for (const char *e = "\"\\/bfnrt"; *e; e++) SIMPLE_ESCAPE[(uint8_t)*e] = 1;
  for (const char *e = " \t\r\n,:[]{}\""; *e; e++) ENDS_SCALAR[(uint8_t)*e] = 1;
}

/* A number or literal starting at p: the offset after it, or 0 when it is none (or is not followed by whitespace, structure, a quote or the end). */
static size_t scan_scalar(const uint8_t *b, size_t n, size_t p) {
  const size_t start = p;
  const uint8_t c = b[p];
  if (c == 't' || c == 'f' || c == 'n') {
    const char *word = c == 't' ? "true" : c == 'f' ? "false" : "null";
    const size_t len = strlen(word);
    if (n - p < len || memcmp(b + p, word, len) != 0) return 0;
    p += len;
  } else {
    if (p < n && b[p] == '-') p++;
    if (p < n && b[p] == '0') {
      p++;
    } else if (p < n && IS_DIGIT[b[p]]) {
      while (p < n && IS_DIGIT[b[p]]) p++;
    } else {
      return 0;
    }
    if (p < n && b[p] == '.') {
      p++;
      if (p >= n || !IS_DIGIT[b[p]]) return 0;
      while (p < n && IS_DIGIT[b[p]]) p++;
    }
    if (p < n && (b[p] == 'e' || b[p] == 'E')) {
      p++;
      if (p < n && (b[p] == '+' || b[p] == '-')) p++;
      if (p >= n || !IS_DIGIT[b[p]]) return 0;
      while (p < n && IS_DIGIT[b[p]]) p++;
    }
  }
  if (p < n && !ENDS_SCALAR[b[p]]) return 0;
  return p > start ? p : 0;
}

/* The element spans, grown as needed: [start, end) of each, in order. */
typedef struct {
  uint32_t *at;
  size_t count, capacity;
} spans;

static int push_span(spans *s, size_t start, size_t end) {
  if (s->count == s->capacity) {
    const size_t capacity = s->capacity ? s->capacity * 2 : 4096;
    uint32_t *grown = realloc(s->at, capacity * 2 * sizeof *grown);
    if (!grown) return 0;
    s->at = grown;
    s->capacity = capacity;
  }
  s->at[2 * s->count] = (uint32_t)start;
  s->at[2 * s->count + 1] = (uint32_t)end;
  s->count++;
  return 1;
}

static inline int is_ws(uint8_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* Blocks classified per refill: their tokens (at most 64 a block) fit the buffer. */
#define REFILL_BLOCKS 32

/* Stage 1: the positions of the tokens (structure, opening quotes, first bytes of scalars), a few blocks at a time. */
typedef struct {
  const uint8_t *body;
  size_t n, base;
  uint64_t escaped_carry, string_carry, scalar_carry;
  int line_breaks, fault;
  size_t count, next;
  uint32_t at[REFILL_BLOCKS * 64 + 4];
} tokens;

/* Classifies the next blocks; 0 when there are no more tokens (the end, or a fault: see `fault`). */
static int refill(tokens *t) {
  t->count = t->next = 0;
  size_t count = 0;
  uint8_t tail[64];
  for (int k = 0; k < REFILL_BLOCKS && t->base < t->n; k++, t->base += 64) {
    const size_t base = t->base;
    const uint8_t *block = t->body + base;
    if (t->n - base < 64) {
      /* The last block, padded with spaces: whitespace changes nothing. */
      memset(tail, ' ', sizeof tail);
      memcpy(tail, block, t->n - base);
      block = tail;
    }
    classes c;
    classify(block, &c);

    /* Which bytes a backslash escapes; backslashes are rare, so one at a time. */
    uint64_t escaped = t->escaped_carry, escapes = 0;
    t->escaped_carry = 0;
    for (uint64_t rest = c.backslash; rest; rest &= rest - 1) {
      const int i = __builtin_ctzll(rest);
      if (escaped >> i & 1) continue;
      escapes |= (uint64_t)1 << i;
      if (i == 63) t->escaped_carry = 1;
      else escaped |= (uint64_t)2 << i;
    }
    const uint64_t quotes = c.quote & ~escaped;
    /* In a string: from its opening quote up to (not including) its closing one. */
    const uint64_t in_string = prefix_xor(quotes) ^ t->string_carry;
    t->string_carry = (uint64_t)((int64_t)in_string >> 63);
    /* A raw control character in a string, or a backslash outside one (the quotes after it are not to be trusted). */
    if ((c.ctrl & in_string) || (escapes & ~in_string)) goto fault;
    for (uint64_t rest = escapes; rest; rest &= rest - 1) {
      const size_t p = base + (size_t)__builtin_ctzll(rest);
      const uint8_t *b = t->body;
      if (p + 1 >= t->n) goto fault;
      if (SIMPLE_ESCAPE[b[p + 1]]) continue;
      if (b[p + 1] != 'u' || p + 5 >= t->n || !IS_HEX[b[p + 2]] || !IS_HEX[b[p + 3]] || !IS_HEX[b[p + 4]] || !IS_HEX[b[p + 5]]) goto fault;
    }
    const uint64_t outside = ~(in_string | quotes);
    const uint64_t scalar = outside & ~(c.op | c.ws);
    const uint64_t scalar_starts = scalar & ~(scalar << 1 | t->scalar_carry);
    t->scalar_carry = scalar >> 63;
    if (c.line & outside) t->line_breaks = 1;
    /* Four positions at a time, whether or not there are four: the buffer has room past its end. */
    uint64_t found = (c.op & outside) | (quotes & in_string) | scalar_starts;
    uint32_t *to = t->at + count;
    const int tokens_here = __builtin_popcountll(found);
    for (int i = 0; i < tokens_here; i += 4) {
      to[i] = (uint32_t)base + (uint32_t)__builtin_ctzll(found | (uint64_t)1 << 63);
      found &= found - 1;
      to[i + 1] = (uint32_t)base + (uint32_t)__builtin_ctzll(found | (uint64_t)1 << 63);
      found &= found - 1;
      to[i + 2] = (uint32_t)base + (uint32_t)__builtin_ctzll(found | (uint64_t)1 << 63);
      found &= found - 1;
      to[i + 3] = (uint32_t)base + (uint32_t)__builtin_ctzll(found | (uint64_t)1 << 63);
      found &= found - 1;
    }
    count += (size_t)tokens_here;
  }
  t->count = count;
  return count > 0;
fault:
  t->fault = 1;
  t->count = 0;
  return 0;
}

/*
 * Checks `body` (n bytes, UTF-8) as scanBatch does and, when it takes it, packs its elements
 * one per line in place. Answers 1 with out[OUT_FIRST..] filled (and the positions of the
 * first `limit` non-objects from out[OUT_INDEXES]), or 0 with the body untouched.
 *
 * Stage 2 is a goto per grammar position (as simdjson's is), not a switch on a state: each
 * position's branches stay predictable in a batch of objects of one shape.
 */
int tm_scan_array(uint8_t *body, size_t n, uint32_t limit, uint32_t *out) {
  static int ready;
  if (!ready) {
    init_tables();
    ready = 1;
  }
  if (n >= UINT32_MAX) return 0;
  tokens *t = calloc(1, sizeof *t);
  if (!t) return 0;
  t->body = body;
  t->n = n;
  uint8_t stack[MAX_DEPTH];
  int depth = 0, ok = 0;
  spans elements = {0};
  size_t p = 0, element_start = 0;
  uint8_t c = 0;
  uint32_t objects = 0, non_objects = 0, listed = 0;

#define NEXT()                                                    \
  do {                                                            \
    if (t->next == t->count && !refill(t)) goto done;             \
    p = t->at[t->next++];                                         \
    c = body[p];                                                  \
  } while (0)

  NEXT();
  if (c != '[') goto done;
  stack[depth++] = '[';
  NEXT();
  if (c == ']') goto closed;

element: /* c starts an element */
  element_start = p;
value: /* c starts a value */
  switch (c) {
    case '{':
      if (depth == MAX_DEPTH) goto done;
      stack[depth++] = '{';
      NEXT();
      if (c == '}') {
        depth--;
        goto value_end;
      }
      goto key;
    case '[':
      if (depth == MAX_DEPTH) goto done;
      stack[depth++] = '[';
      NEXT();
      if (c == ']') {
        depth--;
        goto value_end;
      }
      goto value;
    case '"':
      goto value_end;
    case ',':
    case ':':
    case ']':
    case '}':
      goto done;
    default:
      if (!scan_scalar(body, n, p)) goto done;
      goto value_end;
  }
key: /* c should open a member's key */
  if (c != '"') goto done;
  NEXT();
  if (c != ':') goto done;
  NEXT();
  goto value;
value_end: /* a value ended inside the container at stack[depth - 1] */
  NEXT();
  if (depth == 1) goto element_end;
  if (stack[depth - 1] == '{') {
    if (c == ',') {
      NEXT();
      goto key;
    }
    if (c != '}') goto done;
  } else {
    if (c == ',') {
      NEXT();
      goto value;
    }
    if (c != ']') goto done;
  }
  depth--;
  goto value_end;
element_end: /* c follows an element: ',' or the array's ']' */
  if (c != ',' && c != ']') goto done;
  {
    size_t end = p;
    while (end > element_start && is_ws(body[end - 1])) end--;
    if (!push_span(&elements, element_start, end)) goto done;
  }
  if (body[element_start] == '{') {
    objects++;
  } else {
    if (listed < limit) out[OUT_INDEXES + listed++] = (uint32_t)(elements.count - 1);
    non_objects++;
  }
  if (c == ',') {
    NEXT();
    goto element;
  }
closed: /* the array is closed: nothing may follow but whitespace */
  if (t->next < t->count || refill(t) || t->fault || t->string_carry) goto done;
#undef NEXT

  /* Valid: pack the elements one per line, as scanBatch does. */
  size_t first = elements.count ? elements.at[0] : 0, write = first;
  for (size_t i = 0; i < elements.count; i++) {
    const size_t start = elements.at[2 * i], len = elements.at[2 * i + 1] - start;
    if (i > 0) body[write++] = '\n';
    if (write != start) memmove(body + write, body + start, len);
    if (t->line_breaks) {
      for (uint8_t *q = body + write, *end = body + write + len; q < end; q++) {
        if (*q == '\n' || *q == '\r') *q = ' ';
      }
    }
    write += len;
  }
  out[OUT_FIRST] = (uint32_t)first;
  out[OUT_WRITE] = (uint32_t)write;
  out[OUT_OBJECTS] = objects;
  out[OUT_NON_OBJECTS] = non_objects;
  ok = 1;
done:
  free(elements.at);
  free(t);
  return ok;
}
