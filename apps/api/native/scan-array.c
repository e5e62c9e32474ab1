/*
 * The send route's check of a JSON array body, for large bodies at several GB/s: what
 * scanBatch (src/domain/intake/scan.ts) does, without its error messages. On a body it takes,
 * the answer and the packed NDJSON are byte for byte scanBatch's; on anything else (invalid
 * JSON, not an array, nesting past the limit, more elements than it keeps track of) it
 * leaves the body untouched and says no, and scanBatch itself runs to name the fault. The
 * body must be UTF-8 already (the caller checks it first). Through koffi it takes about half
 * of scanBatch's time on a 10 MB batch (research/42).
 *
 * Two stages per 64-byte block, as simdjson does: stage 1 turns the block into bit masks
 * (quotes not escaped, inside-string bytes, structural characters, the first byte of each
 * number or literal) with SSE2 compares, or AVX2 ones where the CPU has them; stage 2 walks
 * the tokens those masks leave, in order, through the JSON grammar with an explicit stack.
 * String bodies are never walked byte by byte: only their escapes are looked at.
 *
 * x86_64 only: elsewhere the library is not built and scanBatch checks every body.
 */
#if !defined(__x86_64__)
#error "the C check is built for x86_64 only"
#endif
#include <immintrin.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* out[]: what tm_scan_array answers, the positions of non-objects after OUT_INDEXES. */
enum { OUT_FIRST, OUT_WRITE, OUT_OBJECTS, OUT_NON_OBJECTS, OUT_INDEXES };

typedef struct {
  uint64_t quote, backslash, op, ws, ctrl, line;
} classes;

static inline __attribute__((always_inline)) void classify(const uint8_t *p, classes *c) {
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
}

/* The same with 32-byte vectors, where the CPU has AVX2 (tm_scan_array asks it once). */
__attribute__((target("avx2"))) static inline void classify_avx2(const uint8_t *p, classes *c) {
  uint64_t quote = 0, backslash = 0, op = 0, ws = 0, ctrl = 0, line = 0;
  for (int j = 0; j < 2; j++) {
    const __m256i v = _mm256_loadu_si256((const __m256i *)(p + 32 * j));
#define EQ(x, ch) _mm256_cmpeq_epi8((x), _mm256_set1_epi8(ch))
#define BITS(x) ((uint64_t)(uint32_t)_mm256_movemask_epi8(x) << (32 * j))
    const __m256i folded = _mm256_or_si256(v, _mm256_set1_epi8(0x20));
    const __m256i lf = _mm256_or_si256(EQ(v, '\n'), EQ(v, '\r'));
    quote |= BITS(EQ(v, '"'));
    backslash |= BITS(EQ(v, '\\'));
    op |= BITS(_mm256_or_si256(_mm256_or_si256(EQ(folded, '{'), EQ(folded, '}')), _mm256_or_si256(EQ(v, ':'), EQ(v, ','))));
    ws |= BITS(_mm256_or_si256(_mm256_or_si256(EQ(v, ' '), EQ(v, '\t')), lf));
    ctrl |= BITS(_mm256_cmpeq_epi8(_mm256_subs_epu8(v, _mm256_set1_epi8(0x1f)), _mm256_setzero_si256()));
    line |= BITS(lf);
#undef EQ
#undef BITS
  }
  *c = (classes){quote, backslash, op, ws, ctrl, line};
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
static inline size_t scan_scalar(const uint8_t *b, size_t n, size_t p) {
  const size_t start = p;
  const uint8_t c = b[p];
  if (c == 't' || c == 'n') {
    if (n - p < 4 || memcmp(b + p, c == 't' ? "true" : "null", 4) != 0) return 0;
    p += 4;
  } else if (c == 'f') {
    if (n - p < 5 || memcmp(b + p, "false", 5) != 0) return 0;
    p += 5;
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

/* At most this many elements (8 MiB of spans); a body of more, all tiny, goes to scanBatch, which needs no memory beside the body. */
#define MAX_ELEMENTS (1u << 20)

static int push_span(spans *s, size_t start, size_t end) {
  if (s->count == MAX_ELEMENTS) return 0;
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

/* Stage 1, a block at a time: the token mask (structure, opening quotes, first bytes of scalars) of the next block that has any. */
typedef struct blocks {
  const uint8_t *body;
  size_t n;
  /* The next block to classify, and the one `tokens` is of. */
  size_t next, base;
  uint64_t tokens;
  uint64_t escaped_carry, string_carry, scalar_carry;
  int line_breaks, fault;
  /* advance_with for this CPU. */
  int (*advance)(struct blocks *);
} blocks;

/* Classifies blocks up to the next one with tokens; 0 at the end, or at a fault (see `fault`). */
static inline __attribute__((always_inline)) int advance_with(blocks *t, const int wide) {
  uint8_t tail[64];
  for (; t->next < t->n; t->next += 64) {
    const size_t base = t->next;
    const uint8_t *block = t->body + base;
    if (t->n - base < 64) {
      /* The last block, padded with spaces: whitespace changes nothing. */
      memset(tail, ' ', sizeof tail);
      memcpy(tail, block, t->n - base);
      block = tail;
    }
    classes c;
    if (wide) classify_avx2(block, &c);
    else classify(block, &c);

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
    if ((c.ctrl & in_string) || (escapes & ~in_string)) {
      t->fault = 1;
      return 0;
    }
    for (uint64_t rest = escapes; rest; rest &= rest - 1) {
      const size_t p = base + (size_t)__builtin_ctzll(rest);
      const uint8_t *b = t->body;
      if (p + 1 < t->n && SIMPLE_ESCAPE[b[p + 1]]) continue;
      if (p + 5 >= t->n || b[p + 1] != 'u' || !IS_HEX[b[p + 2]] || !IS_HEX[b[p + 3]] || !IS_HEX[b[p + 4]] || !IS_HEX[b[p + 5]]) {
        t->fault = 1;
        return 0;
      }
    }
    const uint64_t outside = ~(in_string | quotes);
    const uint64_t scalar = outside & ~(c.op | c.ws);
    const uint64_t scalar_starts = scalar & ~(scalar << 1 | t->scalar_carry);
    t->scalar_carry = scalar >> 63;
    if (c.line & outside) t->line_breaks = 1;
    const uint64_t tokens = (c.op & outside) | (quotes & in_string) | scalar_starts;
    if (tokens) {
      t->base = base;
      t->tokens = tokens;
      t->next += 64;
      return 1;
    }
  }
  return 0;
}

/* One call per block with tokens (not inlined at every NEXT of the parser: that bloats its loop). */
static int advance_sse2(blocks *t) { return advance_with(t, 0); }
__attribute__((target("avx2"), flatten)) static int advance_avx2(blocks *t) { return advance_with(t, 1); }

/*
 * Checks `body` (n bytes, UTF-8) as scanBatch does and, when it takes it, packs its elements
 * one per line in place. Answers 1 with out[OUT_FIRST..] filled (and the positions of the
 * first `limit` non-objects from out[OUT_INDEXES]), or 0 with the body untouched. Elements may
 * nest `nesting` levels of objects and arrays (the array around them is one more).
 *
 * Stage 2 is a goto per grammar position (as simdjson's is), not a switch on a state: each
 * position's branches stay predictable in a batch of objects of one shape.
 */
static int scan(uint8_t *body, size_t n, uint32_t nesting, uint32_t limit, uint32_t *out, size_t out_len, int (*advance)(blocks *)) {
  /* Every write into out[] is below OUT_INDEXES + limit: an out[] too short for that is refused whole. */
  if (n >= UINT32_MAX || out_len < OUT_INDEXES || out_len - OUT_INDEXES < limit) return 0;
  const size_t max_depth = (size_t)nesting + 1;
  blocks *t = calloc(1, sizeof *t);
  uint8_t *stack = malloc(max_depth);
  int ok = 0;
  if (!t || !stack) goto release;
  t->body = body;
  t->n = n;
  t->advance = advance;
  size_t depth = 0;
  spans elements = {0};
  size_t p = 0, element_start = 0;
  uint8_t c = 0;
  uint32_t objects = 0, non_objects = 0, listed = 0;

  /* The tokens left of the block at `base`. */
  uint64_t tokens = 0;
  size_t base = 0;
#define NEXT()                                  \
  do {                                          \
    while (!tokens) {                           \
      if (!t->advance(t)) goto done;               \
      tokens = t->tokens;                       \
      base = t->base;                           \
    }                                           \
    p = base + (size_t)__builtin_ctzll(tokens); \
    tokens &= tokens - 1;                       \
    c = body[p];                                \
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
      if (depth == max_depth) goto done;
      stack[depth++] = '{';
      NEXT();
      if (c == '}') {
        depth--;
        goto value_end;
      }
      goto key;
    case '[':
      if (depth == max_depth) goto done;
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
  if (tokens || t->advance(t) || t->fault || t->string_carry) goto done;
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
release:
  free(stack);
  free(t);
  return ok;
}

static pthread_once_t ready = PTHREAD_ONCE_INIT;
static int avx2;

/* The lookup tables and the CPU's answer, once per process, whichever thread calls first. */
static void get_ready(void) {
  init_tables();
  avx2 = __builtin_cpu_supports("avx2");
}

/* out has out_len elements: the four answers, then room for `limit` indexes. */
int tm_scan_array(uint8_t *body, size_t n, uint32_t nesting, uint32_t limit, uint32_t *out, size_t out_len) {
  pthread_once(&ready, get_ready);
  return scan(body, n, nesting, limit, out, out_len, avx2 ? advance_avx2 : advance_sse2);
}

/* The same without AVX2, whatever the CPU: for the tests, which hold both paths to scanBatch. */
int tm_scan_array_baseline(uint8_t *body, size_t n, uint32_t nesting, uint32_t limit, uint32_t *out, size_t out_len) {
  pthread_once(&ready, get_ready);
  return scan(body, n, nesting, limit, out, out_len, advance_sse2);
}
