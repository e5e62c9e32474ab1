/**
 * docs/limits.md, the one table of limits and defaults, written from the constants of
 * packages/contracts (and, for what only a process's configuration sets, from the defaults the
 * API's and the roller's loadConfig give an environment that sets nothing else).
 *
 *   npm run docs:limits            writes docs/limits.md
 *   npm run docs:limits -- --check exits 1, with the difference, when docs/limits.md is not what
 *                                  it would write (tests/docs-limits.test.ts runs this in npm test)
 *
 * A value is never typed here when a constant holds it; the few that no constant holds are in
 * UNNAMED below, each with where it lives, until they move to packages/contracts.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  IDEMPOTENCY_KEY_PATTERN,
  INACTIVITY_SECONDS_MIN,
  INFER_SAMPLE_MAX_ROWS,
  KEEP_SNAPSHOTS_DEFAULT,
  KEEP_SNAPSHOTS_MAX,
  KEEP_SNAPSHOTS_MIN,
  KEY_OVERLAP_SECONDS_DEFAULT,
  KEY_OVERLAP_SECONDS_MAX,
  LINGER_MS_DEFAULT,
  LINGER_MS_MAX,
  MAX_DECIMAL_PRECISION,
  MAX_TABLE_COLUMNS,
  MIN_SNAPSHOT_AGE_SECONDS_DEFAULT,
  MIN_SNAPSHOT_AGE_SECONDS_MAX,
  PARTITION_FIELDS_MAX,
  PENDING_ROWS_DEFAULT,
  PENDING_ROWS_MAX,
  REJECTS_PAGE_DEFAULT,
  REJECTS_PAGE_MAX,
  REPLAY_WINDOW_DAYS,
  ROLL_BYTES_DEFAULT,
  ROLL_BYTES_MAX,
  ROLL_BYTES_MIN,
  ROLL_MAX_BATCH_IDS,
  ROLL_MAX_BATCHES,
  ROLL_SECONDS_DEFAULT,
  ROLL_SECONDS_MAX,
  ROLL_SECONDS_MIN,
  SEND_BODY_LIMIT,
  SEND_NESTING_LIMIT,
  SEND_REASONS_LIMIT,
  SINK_NAME_PATTERN,
  WAREHOUSE_NAME_PATTERN,
} from '@tablemere/contracts';
import { loadConfig as loadApiConfig } from '../apps/api/src/config.ts';
import { BUSY_RETRY_AFTER_SECONDS } from '../apps/api/src/domain/intake/in-flight.ts';
import { ERROR_CODES, RETRY_AFTER_SECONDS, type ErrorCode } from '../apps/api/src/errors.ts';
import { loadConfig as loadRollerConfig, ORPHAN_AGE_FLOOR_SECONDS } from '../apps/roller/src/config.ts';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const LIMITS_FILE = path.join(repoRoot, 'docs', 'limits.md');

/**
 * Values no exported constant holds yet, typed here once (tell the contracts' owner):
 * the body limit of every route but the send route (apps/api/src/app.ts, ONE_MIB).
 */
const UNNAMED = {
  otherRoutesBodyBytes: 1024 * 1024,
};

// ---- the processes' configuration defaults: what an environment that sets nothing gets ----

const api = loadApiConfig({
  DATABASE_URL: 'postgres://limits@localhost/limits',
  TABLEMERE_SECRET_KEY: Buffer.alloc(32).toString('base64'),
  TABLEMERE_BOOTSTRAP_SECRET: 'limits-table-only-not-a-secret',
  AWS_REGION: 'us-east-1',
  TABLEMERE_INTAKE_BUCKET: 'limits-table',
});
const roller = loadRollerConfig({ TABLEMERE_BOOTSTRAP_SECRET: 'limits-table-only-not-a-secret' });

// ---- formatting for people ----

export function count(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

export function bytes(n: number): string {
  for (const [unit, size] of [['GiB', 1024 ** 3], ['MiB', 1024 ** 2], ['KiB', 1024]] as const) {
    if (n >= size && n % size === 0) return `${count(n / size)} ${unit}`;
  }
  return `${count(n)} bytes`;
}

export function seconds(s: number): string {
  const plural = (n: number, word: string) => `${count(n)} ${word}${n === 1 ? '' : 's'}`;
  if (s >= 86_400 && s % 86_400 === 0) return plural(s / 86_400, 'day');
  if (s >= 3600 && s % 3600 === 0) return plural(s / 3600, 'hour');
  if (s >= 60 && s % 60 === 0) return plural(s / 60, 'minute');
  return `${count(s)} s`;
}

function millis(ms: number): string {
  return ms >= 1000 && ms % 1000 === 0 ? seconds(ms / 1000) : `${count(ms)} ms`;
}

/** `400 invalid_request`, the status from the API's one registry of codes. */
function answer(code: ErrorCode): string {
  return `${ERROR_CODES[code].status} \`${code}\``;
}

/** The longest a pattern's `{min,max}` (or `{0,max}` after a first character) allows. */
function lengthOf(pattern: RegExp, what: string): { min: number; max: number } {
  const repeat = /\{(\d+),(\d+)\}\$$/.exec(pattern.source);
  if (!repeat) throw new Error(`${what}: no {min,max} at the end of ${pattern.source}`);
  const [min, max] = [Number(repeat[1]), Number(repeat[2])];
  // [first][rest]{0,N}: the first character counts too.
  return /\][^\]]*\[[^\]]*\]\{\d+,\d+\}\$$/.test(pattern.source) && min === 0 ? { min: 1, max: max + 1 } : { min, max };
}

// ---- the table ----

interface Row {
  area: string;
  limit: string;
  value: string;
  /** How to change it: fixed, a sink setting, an environment variable. */
  change: string;
  where: string;
  /** What a client sees when it is reached. */
  hit: string;
}

const FIXED = 'fixed';
const key = lengthOf(IDEMPOTENCY_KEY_PATTERN, 'IDEMPOTENCY_KEY_PATTERN');
const sinkName = lengthOf(SINK_NAME_PATTERN, 'SINK_NAME_PATTERN');
const warehouseName = lengthOf(WAREHOUSE_NAME_PATTERN, 'WAREHOUSE_NAME_PATTERN');
const invalid = `${answer('invalid_request')}, naming the field`;
const retryAfter = `\`Retry-After: ${RETRY_AFTER_SECONDS}\``;

export function rows(): Row[] {
  const t = api.timeouts;
  return [
    // Producers: the send route.
    { area: 'Sending', limit: 'Body size', value: bytes(SEND_BODY_LIMIT), change: FIXED, where: 'POST /v1/sinks/{sink_id}: the body after decompression', hit: `${answer('body_too_large')}; a larger \`Content-Length\` is refused before a byte is read` },
    { area: 'Sending', limit: 'Nesting depth', value: `${count(SEND_NESTING_LIMIT)} levels`, change: FIXED, where: 'objects and arrays inside one element of the body', hit: `${answer('invalid_json')} (for NDJSON, with the \`line\`)` },
    { area: 'Sending', limit: '`Idempotency-Key` length', value: `${key.min} to ${count(key.max)} characters of A-Z a-z 0-9 . _ : -`, change: FIXED, where: 'the send route\'s header, which is the batch id', hit: answer('idempotency_key_invalid') },
    { area: 'Sending', limit: 'Replay window', value: seconds(REPLAY_WINDOW_DAYS * 86_400), change: FIXED, where: 'after a batch\'s roll, its `Idempotency-Key` still answers as a replay', hit: 'within it: 200 with the first answer and `Idempotent-Replayed: true` (another body: 409 `batch_id_conflict`); after it, the same key is a new batch (202)' },
    { area: 'Sending', limit: 'Elements listed in `reasons`', value: count(SEND_REASONS_LIMIT), change: FIXED, where: 'the send answer\'s elements that are not objects', hit: 'no error: `rejected` counts them all, `reasons` lists the first ones' },
    { area: 'Sending', limit: 'Send bodies in flight, per API process', value: bytes(api.sendInFlight.processBytes), change: '`TABLEMERE_SEND_MAX_BYTES_IN_FLIGHT`', where: 'bodies being read or stored at once, each counted by its `Content-Length`', hit: `${answer('intake_busy')}, \`Retry-After: ${BUSY_RETRY_AFTER_SECONDS}\`; nothing was read` },
    { area: 'Sending', limit: 'Send bodies in flight, per sink', value: bytes(api.sendInFlight.sinkBytes), change: '`TABLEMERE_SEND_MAX_BYTES_IN_FLIGHT_PER_SINK`', where: 'the same, for one sink, in one API process', hit: `${answer('intake_busy')}, \`Retry-After: ${BUSY_RETRY_AFTER_SECONDS}\`` },
    { area: 'Sending', limit: 'Backlog per sink, batches', value: `${count(api.sinkBacklog.maxPendingBatches)} batches`, change: '`TABLEMERE_SINK_MAX_PENDING_BATCHES`', where: 'batches stored and not yet rolled (a roller that is down or behind)', hit: `${answer('backlog_full')}, \`Retry-After\` from the sink's drain rate` },
    { area: 'Sending', limit: 'Backlog per sink, bytes', value: bytes(api.sinkBacklog.maxPendingBytes), change: '`TABLEMERE_SINK_MAX_PENDING_BYTES`', where: 'the same, in bytes', hit: `${answer('backlog_full')}, \`Retry-After\` from the sink's drain rate` },
    // Every route.
    { area: 'Every request', limit: 'Body size, other routes', value: bytes(UNNAMED.otherRoutesBodyBytes), change: FIXED, where: 'every route but the send route (e.g. POST /v1/sinks with `infer_from` rows)', hit: answer('body_too_large') },
    { area: 'Every request', limit: 'Header size', value: bytes(http.maxHeaderSize), change: 'Node\'s `--max-http-header-size`', where: 'all request headers together', hit: answer('headers_too_large') },
    { area: 'Every request', limit: 'Headers arrive within', value: millis(t.headersMs), change: '`TABLEMERE_HEADERS_TIMEOUT_MS`', where: 'from the request\'s first byte', hit: `${answer('request_timeout')}, connection closed` },
    { area: 'Every request', limit: 'Whole request arrives within', value: millis(t.requestMs), change: '`TABLEMERE_REQUEST_TIMEOUT_MS`', where: 'headers and body', hit: `${answer('request_timeout')}, connection closed` },
    { area: 'Every request', limit: 'Silent connection', value: millis(t.idleMs), change: '`TABLEMERE_IDLE_TIMEOUT_MS`', where: 'no byte either way', hit: 'the connection is closed' },
    { area: 'Every request', limit: 'Idle keep-alive connection', value: millis(t.keepAliveMs), change: '`TABLEMERE_KEEP_ALIVE_TIMEOUT_MS`', where: 'between requests on one connection', hit: 'the connection is closed; the next request opens another' },
    { area: 'Every request', limit: 'Database connection or statement', value: millis(api.dbTimeoutMs), change: '`TABLEMERE_DB_TIMEOUT_MS`', where: 'each connection and statement a request waits for', hit: `${answer('database_unavailable')} (the send route: ${answer('intake_unavailable')}), ${retryAfter}` },
    { area: 'Every request', limit: 'Catalog call', value: millis(api.catalogTimeoutMs), change: '`TABLEMERE_CATALOG_TIMEOUT_MS`', where: 'each catalog call a request makes (tables, sink create)', hit: `${answer('catalog_unavailable')}, ${retryAfter}` },
    { area: 'Every request', limit: 'Object-store request', value: millis(api.storeTimeoutMs), change: '`TABLEMERE_STORE_TIMEOUT_MS`', where: "each request of the send route and the sink reads to the intake store", hit: `${answer('intake_unavailable')}, ${retryAfter}` },
    // Sink settings: the roll policy (set at create).
    { area: 'Rolling', limit: '`roll_seconds`', value: `${seconds(ROLL_SECONDS_MIN)} to ${seconds(ROLL_SECONDS_MAX)}; default ${seconds(ROLL_SECONDS_DEFAULT)}`, change: 'per sink, at create', where: 'a sink rolls at most this long after its oldest pending batch', hit: invalid },
    { area: 'Rolling', limit: '`roll_bytes`', value: `${bytes(ROLL_BYTES_MIN)} to ${bytes(ROLL_BYTES_MAX)}; default ${bytes(ROLL_BYTES_DEFAULT)}`, change: 'per sink, at create', where: 'pending bytes that make a sink due; also the most one roll takes', hit: invalid },
    { area: 'Rolling', limit: '`inactivity_seconds`', value: `${seconds(INACTIVITY_SECONDS_MIN)} to ${seconds(ROLL_SECONDS_MAX)}; default unset (no inactivity trigger)`, change: 'per sink, at create', where: 'a sink rolls after this long without a send', hit: invalid },
    { area: 'Rolling', limit: 'Due trigger, batches', value: `${count(ROLL_MAX_BATCHES)} pending batches`, change: FIXED, where: 'this many pending batches make a sink due, whatever its policy says', hit: 'no error: the sink rolls at the next tick (the "max_batches" of a sink\'s policy)' },
    { area: 'Rolling', limit: 'Batches per roll', value: `${count(ROLL_MAX_BATCH_IDS)} batches`, change: FIXED, where: 'the most one roll takes (and at most `roll_bytes`)', hit: 'no error: the rest goes in the next roll, at once' },
    { area: 'Rolling', limit: 'Roller tick', value: seconds(roller.tickSeconds), change: '`TABLEMERE_ROLLER_TICK_SECONDS`', where: 'how often a roller looks for due sinks', hit: 'a due sink waits up to this long' },
    { area: 'Rolling', limit: 'Rolls at once, per roller', value: count(roller.concurrency), change: '`TABLEMERE_ROLLER_CONCURRENCY`', where: 'across sinks; one sink rolls in one roller at a time (its lease)', hit: 'other due sinks wait for the next tick' },
    { area: 'Rolling', limit: 'Sink lease', value: seconds(roller.leaseSeconds), change: '`TABLEMERE_ROLLER_LEASE_SECONDS`', where: 'renewed while a roll runs; the longest a sink waits for a roller that died', hit: 'another roller takes the sink after it' },
    // Sink settings that PATCH changes.
    { area: 'Sink settings', limit: '`linger_ms`', value: `0 to ${count(LINGER_MS_MAX)} ms; default ${count(LINGER_MS_DEFAULT)} ms`, change: 'per sink, create or PATCH', where: 'how long a send waits to share an intake object with others', hit: invalid },
    { area: 'Sink settings', limit: '`keep_snapshots`', value: `${count(KEEP_SNAPSHOTS_MIN)} to ${count(KEEP_SNAPSHOTS_MAX)}; default ${count(KEEP_SNAPSHOTS_DEFAULT)}`, change: 'per sink, create or PATCH', where: 'snapshots of the table that upkeep\'s expiry keeps', hit: invalid },
    { area: 'Sink settings', limit: '`min_snapshot_age_seconds`', value: `0 to ${seconds(MIN_SNAPSHOT_AGE_SECONDS_MAX)}; default ${seconds(MIN_SNAPSHOT_AGE_SECONDS_DEFAULT)}`, change: 'per sink, create or PATCH', where: 'younger snapshots are never expired', hit: invalid },
    { area: 'Sink settings', limit: '`partition` fields', value: `1 to ${count(PARTITION_FIELDS_MAX)}`, change: FIXED, where: 'a sink\'s partition spec, at create', hit: invalid },
    { area: 'Sink settings', limit: 'Sink name', value: `${sinkName.min} to ${sinkName.max} characters`, change: FIXED, where: 'lowercase letters, digits, `_`, `-`', hit: invalid },
    { area: 'Sink settings', limit: 'Warehouse name', value: `${warehouseName.min} to ${warehouseName.max} characters`, change: FIXED, where: 'the same characters', hit: invalid },
    // Keys.
    { area: 'Send keys', limit: 'Old key after a rotation', value: `0 to ${seconds(KEY_OVERLAP_SECONDS_MAX)}; default ${seconds(KEY_OVERLAP_SECONDS_DEFAULT)}`, change: '`overlap_seconds` of the rotation', where: 'the old send key keeps working beside the new one', hit: `${invalid}; another rotation meanwhile: ${answer('key_rotation_in_progress')} (unless \`finish: true\`); the old key after it: ${answer('unauthorized')}` },
    // Tables.
    { area: 'Tables', limit: 'Columns of a created table', value: count(MAX_TABLE_COLUMNS), change: FIXED, where: 'the table create route and a sink\'s `create_table`', hit: `${invalid} (inferred: ${answer('schema_not_inferred')})` },
    { area: 'Tables', limit: 'Sample rows to infer a table from', value: `${count(INFER_SAMPLE_MAX_ROWS)} rows`, change: FIXED, where: `\`create_table.infer_from\` (within the ${bytes(UNNAMED.otherRoutesBodyBytes)} body)`, hit: invalid },
    { area: 'Tables', limit: 'Decimal precision', value: `${count(MAX_DECIMAL_PRECISION)} digits`, change: FIXED, where: 'a `decimal(P,S)` column (Iceberg\'s own limit)', hit: invalid },
    // Reading a sink.
    { area: 'Reading a sink', limit: 'Rejected rows per page', value: `1 to ${count(REJECTS_PAGE_MAX)}; default ${count(REJECTS_PAGE_DEFAULT)}`, change: '`limit` of the request', where: 'GET /v1/sinks/{sink}/rejects', hit: invalid },
    { area: 'Reading a sink', limit: 'Pending rows shown', value: `1 to ${count(PENDING_ROWS_MAX)}; default ${count(PENDING_ROWS_DEFAULT)}`, change: '`limit` of the request', where: 'GET /v1/sinks/{sink}/pending', hit: invalid },
    // Retention and upkeep.
    { area: 'Retention and upkeep', limit: 'Rejects files kept', value: seconds(roller.rejectsRetentionSeconds), change: '`TABLEMERE_ROLLER_REJECTS_RETENTION_SECONDS`', where: 'a roll\'s rejects file, from when it was written', hit: 'older rejects are deleted and no longer listed' },
    { area: 'Retention and upkeep', limit: 'Batch ledger and roll records kept', value: seconds(REPLAY_WINDOW_DAYS * 86_400), change: FIXED, where: 'from a batch\'s roll (the replay window)', hit: 'GET /v1/sinks/{sink}/batches/{batch_id} answers `unknown`' },
    { area: 'Retention and upkeep', limit: 'Upkeep of a table', value: `every ${seconds(roller.upkeep.intervalSeconds)}`, change: '`TABLEMERE_ROLLER_UPKEEP_SECONDS` (0: only by hand)', where: 'compaction, snapshot expiry and orphan removal, after a roll', hit: 'no error' },
    { area: 'Retention and upkeep', limit: 'Orphan files younger than', value: `${seconds(roller.upkeep.orphanAgeMs / 1000)} (at least ${seconds(ORPHAN_AGE_FLOOR_SECONDS)})`, change: '`TABLEMERE_ROLLER_UPKEEP_ORPHAN_AGE_SECONDS`', where: 'unreferenced files are never deleted before this age', hit: 'a roller set lower refuses to start' },
  ];
}

function cell(text: string): string {
  return text.replace(/\|/g, '\\|');
}

export function render(): string {
  const lines = [
    '# Limits and defaults',
    '',
    '<!-- Written by scripts/limits-table.ts from packages/contracts and the API\'s and roller\'s configuration defaults: do not edit by hand, run `npm run docs:limits`. npm test fails when this file is not what the script writes. -->',
    '',
    'Every limit a producer, an owner or an operator can reach, with its default. "fixed" cannot be changed; a sink setting is',
    'set at create (`POST /v1/sinks`, `tablemere sink create`) or changed later (`PATCH /v1/sinks/{sink}`, `tablemere sink update`);',
    'a `TABLEMERE_*` variable is read by the API or the roller at start. Every refusal is a JSON body',
    '`{"error": {"code", "message", ...}}`; a `Retry-After` means: send the same request again after that many seconds.',
    '',
    '| Area | Limit | Value | Changed by | Where it applies | When it is reached |',
    '| --- | --- | --- | --- | --- | --- |',
  ];
  let area = '';
  for (const row of rows()) {
    const shown = row.area === area ? '' : `**${row.area}**`;
    area = row.area;
    lines.push(`| ${[shown, row.limit, row.value, row.change, row.where, row.hit].map(cell).join(' | ')} |`);
  }
  lines.push('');
  return lines.join('\n');
}

/** The lines that differ, as `-` (in the file) and `+` (what the script writes), with line numbers. */
export function difference(actual: string, expected: string): string[] {
  const a = actual.split('\n');
  const b = expected.split('\n');
  // Longest common subsequence: the files are a few dozen lines.
  const lcs = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) for (let j = b.length - 1; j >= 0; j--) lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      i++;
      j++;
    } else if (i < a.length && (j === b.length || lcs[i + 1]![j]! >= lcs[i]![j + 1]!)) {
      out.push(`- ${i + 1}: ${a[i]}`);
      i++;
    } else {
      out.push(`+ ${j + 1}: ${b[j]}`);
      j++;
    }
  }
  return out;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const expected = render();
  const shown = path.relative(repoRoot, LIMITS_FILE);
  if (process.argv.includes('--check')) {
    let actual = '';
    try {
      actual = readFileSync(LIMITS_FILE, 'utf8');
    } catch {
      console.error(`${shown} is missing: run \`npm run docs:limits\` and commit it`);
      process.exit(1);
    }
    if (actual !== expected) {
      const diff = difference(actual, expected);
      console.error(`${shown} is not what scripts/limits-table.ts writes from the current limits (a limit in packages/contracts or a configuration default changed, or the file was edited by hand).`);
      console.error('Run `npm run docs:limits` and commit docs/limits.md. The difference (- the file, + what the script writes):');
      console.error(diff.join('\n'));
      process.exit(1);
    }
    console.log(`${shown} is up to date`);
  } else {
    writeFileSync(LIMITS_FILE, expected);
    console.log(`wrote ${shown} (${rows().length} limits)`);
  }
}
