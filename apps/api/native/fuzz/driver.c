/*
 * Fuzz driver of the send route's C check (../scan-array.c), built with it under
 * AddressSanitizer and UBSan (apps/api/test/support/native-fuzz.ts):
 *
 *   driver --seconds S [--runs N] [--seed X] [--nesting L] [--crashes DIR] CORPUS_DIR...
 *
 * Runs every corpus file once as it is, then mutated ones (bytes flipped, inserted, dropped,
 * cut off, spliced with another file, deep nesting, long strings, random bytes) until S
 * seconds or N runs have passed. Each input sits in a heap buffer of exactly its length and
 * out[] has exactly the length the call claims for it, so a read or write one past either is
 * a sanitizer report. Both entry points (AVX2 where the CPU has it, and the baseline) must
 * answer alike, leave a refused body untouched, and keep a taken body's answer inside it.
 * On a report or a failed check the input is written to the crashes directory, its name
 * holding the call's nesting limit, reasons limit and out[] length. The last line on stdout
 * counts the runs.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int tm_scan_array(uint8_t *body, size_t n, uint32_t nesting, uint32_t limit, uint32_t *out, size_t out_len);
int tm_scan_array_baseline(uint8_t *body, size_t n, uint32_t nesting, uint32_t limit, uint32_t *out, size_t out_len);

/* The sanitizers' hook, called before the process dies of a report. */
void __sanitizer_set_death_callback(void (*callback)(void));

/* As in scan-array.c: out[] holds four answers, then the indexes of non-objects. */
enum { OUT_INDEXES = 4 };

/* Mutated inputs stay below this, so a run stays short. */
#define MAX_INPUT (1u << 20)

typedef struct {
  uint8_t *data;
  size_t len;
} input;

static input *corpus;
static size_t corpus_len, corpus_cap;

/* The input being checked, written out if it brings a report. */
static const uint8_t *current;
static size_t current_len;
static const char *crashes_dir;

static uint64_t rng_state;

static uint64_t rnd(void) {
  /* xorshift64*: fast, and the same runs for a seed. */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 0x2545F4914F6CDD1DULL;
}

static size_t below(size_t n) { return n ? (size_t)(rnd() % n) : 0; }

/* The call being made: its nesting and reasons limits and out[]'s length. */
static uint32_t current_nesting, current_limit;
static size_t current_out_len;

static void save_current(void) {
  if (!crashes_dir || !current) return;
  char path[4096];
  snprintf(path, sizeof path, "%s/crash-nesting%u-limit%u-out%zu-%016llx", crashes_dir, current_nesting, current_limit, current_out_len,
           (unsigned long long)rng_state);
  FILE *f = fopen(path, "wb");
  if (!f) return;
  fwrite(current, 1, current_len, f);
  fclose(f);
  fprintf(stderr, "fuzz: the input is in %s\n", path);
}

static void fail(const char *why) {
  fprintf(stderr, "fuzz: %s\n", why);
  save_current();
  abort();
}

/* A heap buffer of exactly `len` bytes (under ASan malloc(0) is a buffer of none, not NULL). */
static void *exact(size_t len) {
  void *buffer = malloc(len);
  if (!buffer) fail("out of memory");
  return buffer;
}

static uint8_t *exact_copy(const uint8_t *bytes, size_t len) {
  uint8_t *copy = exact(len);
  memcpy(copy, bytes, len);
  return copy;
}

static void add_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return;
  static uint8_t scratch[MAX_INPUT];
  const size_t len = fread(scratch, 1, MAX_INPUT, f);
  fclose(f);
  if (corpus_len == corpus_cap) {
    corpus_cap = corpus_cap ? 2 * corpus_cap : 1024;
    corpus = realloc(corpus, corpus_cap * sizeof *corpus);
    if (!corpus) fail("out of memory");
  }
  corpus[corpus_len++] = (input){exact_copy(scratch, len), len};
}

static void add_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) {
    fprintf(stderr, "fuzz: cannot read %s\n", dir);
    exit(2);
  }
  char path[4096];
  for (struct dirent *e; (e = readdir(d));) {
    if (e->d_name[0] == '.') continue;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    add_file(path);
  }
  closedir(d);
}

static uint64_t runs, taken;
static uint32_t nesting = 512;

/* One input through both entry points, with a reasons limit and an out[] length of its own. */
static void check(const uint8_t *bytes, size_t len) {
  static const uint32_t limits[] = {0, 1, 3, 1000};
  const uint32_t limit = limits[below(4)];
  /* Mostly the room the limit needs; sometimes less (it must refuse), sometimes more. */
  size_t out_len = OUT_INDEXES + limit;
  const unsigned odd = (unsigned)below(16);
  if (odd == 0) out_len = below(OUT_INDEXES + limit);
  else if (odd == 1) out_len += 1 + below(8);
  /* Now and then a low nesting limit, so the depth check is reached on short inputs. */
  const uint32_t depth = below(8) == 0 ? (uint32_t)below(4) : nesting;

  current = bytes;
  current_len = len;
  current_nesting = depth;
  current_limit = limit;
  current_out_len = out_len;
  uint8_t *a = exact_copy(bytes, len), *b = exact_copy(bytes, len);
  uint32_t *out_a = exact(out_len * sizeof *out_a), *out_b = exact(out_len * sizeof *out_b);
  const int ra = tm_scan_array(a, len, depth, limit, out_a, out_len);
  const int rb = tm_scan_array_baseline(b, len, depth, limit, out_b, out_len);
  if (ra != rb) fail("the two entry points answer differently");
  if (ra == 0) {
    if (memcmp(a, bytes, len) != 0 || memcmp(b, bytes, len) != 0) fail("a refused body was changed");
  } else {
    if (out_len < OUT_INDEXES + limit) fail("a call with too short an out[] was answered");
    if (memcmp(a, b, len) != 0) fail("the two entry points packed the body differently");
    const uint32_t listed = out_a[3] < limit ? out_a[3] : limit;
    if (memcmp(out_a, out_b, (OUT_INDEXES + listed) * sizeof *out_a) != 0) fail("the two entry points answer out[] differently");
    if (out_a[0] > out_a[1] || out_a[1] > len) fail("the packed NDJSON is not inside the body");
    for (uint32_t i = 1; i < listed; i++) {
      if (out_a[OUT_INDEXES + i] <= out_a[OUT_INDEXES + i - 1]) fail("the non-objects' positions are not in order");
    }
    taken++;
  }
  free(a);
  free(b);
  free(out_a);
  free(out_b);
  current = NULL;
  runs++;
}

/* Appends `len` bytes to buf (of *n, capacity MAX_INPUT), as many as fit. */
static void put(uint8_t *buf, size_t *n, const void *bytes, size_t len) {
  if (len > MAX_INPUT - *n) len = MAX_INPUT - *n;
  memcpy(buf + *n, bytes, len);
  *n += len;
}

static void put_repeated(uint8_t *buf, size_t *n, const char *piece, size_t times) {
  const size_t len = strlen(piece);
  for (size_t i = 0; i < times && *n + len <= MAX_INPUT; i++) put(buf, n, piece, len);
}

static const char JSON_BYTES[] = "\"\\{}[]:,0123456789-+.eEtrufalsn \n\r\t";

/* One mutation of src (len bytes) into dst; answers the new length. */
static size_t mutate_once(const uint8_t *src, size_t len, uint8_t *dst) {
  const size_t at = below(len + 1);
  size_t n = 0;
  switch (below(9)) {
    case 0: /* a byte flipped */
      put(dst, &n, src, len);
      if (len) dst[below(len)] ^= (uint8_t)(1u << below(8));
      return n;
    case 1: { /* a byte of JSON's (or any byte) put in */
      const uint8_t byte = below(4) ? (uint8_t)JSON_BYTES[below(sizeof JSON_BYTES - 1)] : (uint8_t)rnd();
      put(dst, &n, src, at);
      put(dst, &n, &byte, 1);
      put(dst, &n, src + at, len - at);
      return n;
    }
    case 2: /* a stretch dropped */
      put(dst, &n, src, at);
      if (at < len) {
        const size_t skip = 1 + below(len - at < 16 ? len - at : 16);
        put(dst, &n, src + at + skip, len - at - skip);
      }
      return n;
    case 3: /* cut off */
      put(dst, &n, src, at);
      return n;
    case 4: { /* spliced: the start of this one, the rest of another */
      const input *other = &corpus[below(corpus_len)];
      const size_t from = below(other->len + 1);
      put(dst, &n, src, at);
      put(dst, &n, other->data + from, other->len - from);
      return n;
    }
    case 5: { /* deep nesting, closed or not, around the limit */
      const size_t levels = nesting - 2 + below(6);
      const char *open = below(2) ? "[" : "{\"a\":";
      put(dst, &n, src, at);
      put_repeated(dst, &n, open, levels);
      if (below(2)) {
        put(dst, &n, "1", 1);
        put_repeated(dst, &n, open[0] == '[' ? "]" : "}", levels);
      }
      put(dst, &n, src + at, len - at);
      return n;
    }
    case 6: { /* a long string, plain or of escapes, across many blocks */
      static const char *const pieces[] = {"x", "\\n", "\\\"", "\\\\", "\\u00e9", "\xc3\xa9"};
      put(dst, &n, src, at);
      put(dst, &n, "\"", below(2));
      put_repeated(dst, &n, pieces[below(6)], below(20000));
      put(dst, &n, "\"", below(4) ? 1 : 0);
      put(dst, &n, src + at, len - at);
      return n;
    }
    case 7: { /* random bytes put in */
      put(dst, &n, src, at);
      for (size_t i = below(128); i > 0 && n < MAX_INPUT; i--) dst[n++] = (uint8_t)rnd();
      put(dst, &n, src + at, len - at);
      return n;
    }
    default: /* random bytes alone, some of them in JSON's alphabet */
      for (size_t i = below(512); i > 0; i--) dst[n++] = below(2) ? (uint8_t)JSON_BYTES[below(sizeof JSON_BYTES - 1)] : (uint8_t)rnd();
      return n;
  }
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
  double seconds = 10;
  uint64_t max_runs = UINT64_MAX;
  rng_state = 0x7461626c656d6572ULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--seconds") && i + 1 < argc) seconds = atof(argv[++i]);
    else if (!strcmp(argv[i], "--runs") && i + 1 < argc) max_runs = strtoull(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "--seed") && i + 1 < argc) rng_state = strtoull(argv[++i], NULL, 10) << 1 | 1;
    else if (!strcmp(argv[i], "--nesting") && i + 1 < argc) nesting = (uint32_t)strtoul(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "--crashes") && i + 1 < argc) crashes_dir = argv[++i];
    else add_dir(argv[i]);
  }
  if (corpus_len == 0) {
    fprintf(stderr, "fuzz: no corpus (give one or more directories of inputs)\n");
    return 2;
  }
  __sanitizer_set_death_callback(save_current);

  const double start = now();
  for (size_t i = 0; i < corpus_len; i++) check(corpus[i].data, corpus[i].len);
  const uint64_t seeds = runs;
  uint8_t *a = exact(MAX_INPUT), *b = exact(MAX_INPUT);
  while (runs - seeds < max_runs && now() - start < seconds) {
    const input *from = &corpus[below(corpus_len)];
    size_t len = mutate_once(from->data, from->len, a);
    for (size_t more = below(4); more > 0; more--) {
      len = mutate_once(a, len, b);
      uint8_t *swap = a;
      a = b;
      b = swap;
    }
    check(a, len);
  }
  const double took = now() - start;
  printf("fuzz: %llu runs (%llu corpus inputs, %llu mutated; %llu taken) in %.1f s, %.0f runs/s\n", (unsigned long long)runs,
         (unsigned long long)seeds, (unsigned long long)(runs - seeds), (unsigned long long)taken, took, (double)runs / took);
  free(a);
  free(b);
  return 0;
}
