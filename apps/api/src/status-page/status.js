// The operator's status page: fetches GET /v1/status with the admin key the operator pasted
// (kept in this tab's sessionStorage, sent only as an Authorization header), renders one row
// per sink with textContent only (no markup from data), sorts by any column, refreshes itself.
'use strict';

const KEY_ITEM = 'tablemere.status.admin-key';
const REFRESH_MS = 10_000;

const $ = (id) => document.getElementById(id);
// loading: the key whose refresh is in flight, so a key pasted meanwhile still gets its own.
const state = { status: null, sortKey: 'name', descending: false, loading: null };

function storedKey() {
  return sessionStorage.getItem(KEY_ITEM);
}

function forgetKey(why) {
  sessionStorage.removeItem(KEY_ITEM);
  state.status = null;
  $('sinks').hidden = true;
  $('empty').hidden = true;
  $('controls').hidden = true;
  $('summary').textContent = '';
  $('key-form').hidden = false;
  showProblem(why);
  $('key').focus();
}

function showProblem(text) {
  $('problem').hidden = !text;
  $('problem').textContent = text ?? '';
}

// ---- formatting ----

function bytes(n) {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = n;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${unit === 0 ? value : value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

function duration(seconds) {
  if (seconds < 10) return Number.isInteger(seconds) ? `${seconds} s` : `${seconds.toFixed(1)} s`;
  const whole = Math.round(seconds);
  const [days, hours, minutes, rest] = [Math.floor(whole / 86400), Math.floor(whole / 3600) % 24, Math.floor(whole / 60) % 60, whole % 60];
  // Two units at most, the smaller left out when it is zero.
  const [big, small] =
    whole < 60 ? [`${rest} s`, '']
    : whole < 3600 ? [`${minutes} min`, rest ? `${rest} s` : '']
    : whole < 86400 ? [`${hours} h`, minutes ? `${minutes} min` : '']
    : [`${days} d`, hours ? `${hours} h` : ''];
  return small ? `${big} ${small}` : big;
}

/** How long before the status was read `at` was: the server's clock on both sides. */
function ago(at) {
  const seconds = Math.max(0, Math.round((Date.parse(state.status.generated_at) - Date.parse(at)) / 1000));
  return `${duration(seconds)} ago`;
}

const count = (n) => n.toLocaleString('en');
const counted = (n, one, many = `${one}s`) => `${count(n)} ${n === 1 ? one : many}`;

// ---- the rows ----

/** A cell's sort value: numbers and ISO times sort as they are, missing values last. */
const SORT_VALUES = {
  name: (s) => s.name,
  state: (s) => (s.roll_error ? 'stalled' : s.state),
  lag: (s) => s.lag.seconds_behind,
  batches: (s) => s.lag.batches_waiting,
  bytes: (s) => s.lag.bytes_waiting,
  last_roll: (s) => s.last_roll?.at ?? null,
  roll_seconds: (s) => s.last_roll?.seconds ?? null,
  rolls: (s) => s.last_day.failed_rolls * 1e9 + s.last_day.committed_rolls,
  rejects: (s) => s.last_day.rejected_rows,
  error: (s) => s.roll_error?.last_at ?? null,
  upkeep: (s) => s.upkeep.last_run?.at ?? null,
};

function compare(a, b) {
  const [x, y] = [SORT_VALUES[state.sortKey](a), SORT_VALUES[state.sortKey](b)];
  if (x === y) return a.name < b.name ? -1 : 1;
  if (x === null) return 1;
  if (y === null) return -1;
  const order = x < y ? -1 : 1;
  return state.descending ? -order : order;
}

function el(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (className) node.className = className;
  return node;
}

function cell(className, ...children) {
  const td = el('td', undefined, className);
  td.append(...children.filter((child) => child !== null));
  return td;
}

const sub = (text, extra = '') => el('span', text, `sub ${extra}`.trim());
const none = (text = '–') => el('span', text, 'none');

function stateCell(sink) {
  if (sink.roll_error) return cell('', el('span', 'stalled', 'badge bad'));
  return cell('', el('span', sink.state, `badge ${sink.state === 'active' ? 'ok' : 'warn'}`));
}

function lagCell(sink) {
  const { seconds_behind, batches_waiting } = sink.lag;
  if (batches_waiting === 0) return cell('num', none('0'));
  // Past the roll policy's longest wait, the sink should have rolled already.
  const over = seconds_behind > sink.roll.roll_seconds;
  const lag = el('span', duration(seconds_behind), over ? 'over' : '');
  if (over) lag.title = `over the sink's roll_seconds (${sink.roll.roll_seconds} s)`;
  return cell('num', lag, sub(`policy ${duration(sink.roll.roll_seconds)}`));
}

function bytesCell(sink) {
  const limits = state.status.backlog_limits;
  const share = Math.max(sink.lag.bytes_waiting / limits.max_pending_bytes, sink.lag.batches_waiting / limits.max_pending_batches);
  const percent = Math.round(share * 100);
  // Shown once it is worth a look: a sink at its cap gets 429 backlog_full.
  return cell('num', el('span', bytes(sink.lag.bytes_waiting)), percent >= 1 ? sub(`${percent}% of cap`, percent >= 80 ? 'over' : '') : null);
}

function lastRollCell(sink) {
  const roll = sink.last_roll;
  if (!roll) return cell('', none('never'));
  const when = el('span', ago(roll.at));
  when.title = roll.at;
  return cell('', when, sub(`${counted(roll.batches, 'batch', 'batches')}, ${counted(roll.rows, 'row')}`));
}

function rollsCell(sink) {
  const { committed_rolls, failed_rolls, failure_reasons } = sink.last_day;
  if (failed_rolls === 0) return cell('num', el('span', count(committed_rolls)));
  const failed = el('span', ` +${count(failed_rolls)} failed`, 'over');
  // Why they failed, most frequent first: "store_unavailable 3, catalog_unavailable 1".
  failed.title = Object.entries(failure_reasons ?? {}).sort((a, b) => b[1] - a[1]).map(([code, n]) => `${code} ${count(n)}`).join(', ');
  return cell('num', el('span', count(committed_rolls)), failed);
}

function errorCell(sink) {
  const error = sink.roll_error;
  if (!error) return cell('', none());
  const text = el('span', `${error.code}: ${error.message}`);
  return cell('error', text, sub(`since ${ago(error.since)}, ${counted(error.attempts, 'failed roll')}, last ${ago(error.last_at)}`));
}

function upkeepCell(sink) {
  const run = sink.upkeep.last_run;
  if (!run) return cell('', none('not yet'));
  const outcome = el('span', run.outcome, `badge ${run.outcome === 'failed' ? 'bad' : 'ok'}`);
  const detail = run.error
    ? `${run.error.code}: ${run.error.message}`
    : `${ago(run.at)}, ${duration(run.seconds)}, files ${run.files_before}→${run.files_after}`;
  const when = sub(detail);
  when.title = run.at;
  return cell(run.error ? 'error' : '', outcome, when);
}

function row(sink) {
  const tr = el('tr');
  tr.dataset.sink = sink.id;
  if (sink.roll_error) tr.className = 'stalled';
  tr.append(
    cell('', el('span', sink.name, 'name'), sub(`${sink.warehouse} · ${sink.table}`)),
    stateCell(sink),
    lagCell(sink),
    cell('num', sink.lag.batches_waiting === 0 ? none('0') : el('span', count(sink.lag.batches_waiting))),
    bytesCell(sink),
    lastRollCell(sink),
    cell('num', sink.last_roll ? el('span', duration(sink.last_roll.seconds)) : none()),
    rollsCell(sink),
    cell('num', sink.last_day.rejected_rows === 0 ? none('0') : el('span', count(sink.last_day.rejected_rows), 'over')),
    errorCell(sink),
    upkeepCell(sink),
  );
  return tr;
}

function render() {
  const { sinks } = state.status;
  const stalled = sinks.filter((s) => s.roll_error).length;
  const waiting = sinks.reduce((sum, s) => sum + s.lag.batches_waiting, 0);
  $('summary').textContent = `${sinks.length} sinks · ${stalled} stalled · ${count(waiting)} batches waiting`;
  document.title = `${stalled > 0 ? `(${stalled} stalled) ` : ''}tablemere sinks: status`;
  $('updated').textContent = `updated ${new Date(state.status.generated_at).toLocaleTimeString('en-GB')}, every ${REFRESH_MS / 1000} s`;
  for (const th of document.querySelectorAll('th[data-key]')) {
    th.setAttribute('aria-sort', th.dataset.key === state.sortKey ? (state.descending ? 'descending' : 'ascending') : 'none');
  }
  $('sinks').tBodies[0].replaceChildren(...[...sinks].sort(compare).map(row));
  $('sinks').hidden = sinks.length === 0;
  $('empty').hidden = sinks.length > 0;
  $('controls').hidden = false;
  $('key-form').hidden = true;
}

// ---- fetching ----

async function refresh() {
  const key = storedKey();
  if (!key || state.loading === key) return;
  state.loading = key;
  try {
    const response = await fetch('v1/status', {
      headers: { authorization: `Bearer ${key}`, accept: 'application/json' },
      cache: 'no-store',
      credentials: 'omit',
    });
    const body = await response.json().catch(() => null);
    // The key was forgotten or replaced while this was in flight: its answer is not shown.
    if (storedKey() !== key) return;
    if (response.status === 401 || response.status === 403) {
      forgetKey(`${body?.error?.message ?? 'The key was refused.'} Paste an admin key of the project.`);
      return;
    }
    if (!response.ok) throw new Error(body?.error?.message ?? `the API answered ${response.status}`);
    state.status = body;
    showProblem(null);
    render();
  } catch (error) {
    if (storedKey() !== key) return;
    showProblem(`Could not refresh: ${error.message}. Retrying every ${REFRESH_MS / 1000} s; the table shows the last figures.`);
  } finally {
    if (state.loading === key) state.loading = null;
  }
}

function start() {
  $('key-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const key = $('key').value.trim();
    $('key').value = '';
    if (!key) return;
    sessionStorage.setItem(KEY_ITEM, key);
    showProblem(null);
    void refresh();
  });
  $('forget').addEventListener('click', () => forgetKey(null));
  $('refresh').addEventListener('click', () => void refresh());
  for (const th of document.querySelectorAll('th[data-key]')) {
    const sortBy = () => {
      state.descending = state.sortKey === th.dataset.key ? !state.descending : false;
      state.sortKey = th.dataset.key;
      if (state.status) render();
    };
    th.tabIndex = 0;
    th.addEventListener('click', sortBy);
    th.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' || event.key === ' ') {
        event.preventDefault();
        sortBy();
      }
    });
  }
  if (storedKey()) void refresh();
  else forgetKey(null);
  // A hidden tab does not poll; it catches up when shown again.
  setInterval(() => {
    if (!document.hidden) void refresh();
  }, REFRESH_MS);
  document.addEventListener('visibilitychange', () => {
    if (!document.hidden) void refresh();
  });
}

start();
