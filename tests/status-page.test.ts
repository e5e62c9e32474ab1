import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { OperatorStatus, type CreatedSink } from '@tablemere/contracts';
import puppeteer, { type Browser, type HTTPRequest, type Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSink, createTable, send } from '../apps/roller/test/support/api.ts';
import { readBoth } from '../apps/roller/test/support/expect.ts';
import { runCli, summaries } from '../apps/roller/test/support/roller.ts';
import { startTestStack, suffix, type TestStack } from '../apps/roller/test/support/stack.ts';

/**
 * The operator's status page in headless Chromium (Debian's `chromium`, installed by
 * `scripts/ensure-install.mjs --tests`), over the real API, store, catalog and roller: one sink
 * rolled with a rejected row, upkept, then sent one more batch (so it has lag and a last roll),
 * and one stalled sink whose rolls fail. The page must show both with their figures, sort,
 * refresh on its own, keep the admin key out of every URL, and screenshot as a filled table.
 */
// The functions given to page.evaluate run in the browser, whose globals Node's types lack.
declare const document: any, sessionStorage: any, Image: any;

const CHROMIUM = process.env.CHROMIUM_PATH ?? 'chromium';
const VIEWPORT = { width: 1500, height: 520 };

let stack: TestStack;
let ns: string;
let rolled: CreatedSink;
let stalled: CreatedSink;
let browser: Browser;
let page: Page;
const requested: string[] = [];

/** The system Chromium's path, or a loud failure naming the install step. */
function chromiumPath(): string {
  const found = spawnSync('sh', ['-c', `command -v "${CHROMIUM}"`], { encoding: 'utf8' });
  if (found.status !== 0) throw new Error(`no ${CHROMIUM} on PATH: run \`node scripts/ensure-install.mjs --tests\` (Debian's chromium package)`);
  return found.stdout.trim();
}

async function rollNow(sink: CreatedSink): Promise<Record<string, unknown>> {
  return summaries(await runCli(['roll', sink.id], stack.rollerEnv()))[0]!;
}

beforeAll(async () => {
  stack = await startTestStack();
  ns = `status_${suffix()}`;
  const columns = [{ name: 'x', type: 'long' as const, required: true }, { name: 'who', type: 'string' as const }];
  await createTable(stack, ns, 'events', columns);
  await createTable(stack, ns, 'stalls', columns);
  rolled = await createSink(stack, `events_${suffix()}`, `${ns}.events`, { roll_seconds: 60 });
  stalled = await createSink(stack, `stalls_${suffix()}`, `${ns}.stalls`, { roll_seconds: 60 });

  await send(stack, rolled, 'b-1', [{ x: 1, who: 'north' }, { x: 2 }]);
  await send(stack, rolled, 'b-2', [{ x: 3, who: 'south' }, { x: 'not a long' }]);
  expect(await rollNow(rolled)).toMatchObject({ outcome: 'committed', rows: 3, rejected_rows: 1 });
  const upkeep = await runCli(['upkeep', rolled.id], stack.rollerEnv());
  expect(upkeep.code, upkeep.stderr).toBe(0);
  await send(stack, rolled, 'b-3', [{ x: 4 }]);

  // The owner's engine sets a table property the append cannot read: every roll of it fails.
  await stack.catalog.commitTable({ namespace: ns, name: 'stalls' }, {
    requirements: [],
    updates: [{ action: 'set-properties', updates: { 'commit.manifest.min-count-to-merge': 'many' } }],
  });
  await send(stack, stalled, 's-1', [{ x: 10 }]);
  expect(await rollNow(stalled)).toMatchObject({ status: 'failed', reason: 'table_unsupported' });
  expect(await rollNow(stalled)).toMatchObject({ status: 'failed' });

  browser = await puppeteer.launch({
    executablePath: chromiumPath(),
    headless: true,
    // CI runs as root, where Chromium's sandbox cannot start.
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--lang=en-GB'],
  });
  page = await browser.newPage();
  await page.setViewport(VIEWPORT);
  page.on('request', (request) => requested.push(request.url()));
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await stack?.dropNamespaces([ns]);
  await stack?.stop();
});

/** The text of each cell of the sink's row, by its column's sort key. */
async function rowOf(sinkId: string): Promise<Record<string, string>> {
  return page.$eval(`tr[data-sink="${sinkId}"]`, (tr) => {
    const keys = [...document.querySelectorAll('th[data-key]')].map((th) => (th as any).dataset.key as string);
    return Object.fromEntries([...(tr as any).children].map((td: any, i) => [keys[i], td.innerText.replace(/\s+/g, ' ').trim()]));
  });
}

/** A duration as the page writes it, within the minutes a slow run may take: `4 s`, `0.6 s`, `1 min 5 s`. */
const D = String.raw`(?:\d+(?:\.\d)? s|\d+ min(?: \d+ s)?)`;

const rowOrder = () => page.$$eval('tbody tr', (rows) => rows.map((tr: any) => tr.dataset.sink as string));

describe('the status page', () => {
  it('serves JSON only with an admin key, and the page only with its own script, style and origin', async () => {
    const unauthenticated = await fetch(`${stack.apiUrl}/v1/status`);
    expect(unauthenticated.status).toBe(401);
    const reader = await fetch(`${stack.apiUrl}/v1/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'status-reader', level: 'read' }),
    });
    const readKey = ((await reader.json()) as { key: string }).key;
    const belowAdmin = await fetch(`${stack.apiUrl}/v1/status`, { headers: { authorization: `Bearer ${readKey}` } });
    expect(belowAdmin.status).toBe(403);
    const answer = await fetch(`${stack.apiUrl}/v1/status`, { headers: { authorization: `Bearer ${stack.adminKey}` } });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('cache-control')).toBe('no-store');
    const status = OperatorStatus.parse(await answer.json());
    const shown = status.sinks.find((s) => s.id === rolled.id)!;
    expect(shown.last_day).toEqual({ committed_rolls: 1, failed_rolls: 0, failure_reasons: {}, rejected_rows: 1 });
    expect(shown.last_roll).toMatchObject({ batches: 2, rows: 3, rejected_rows: 1 });
    expect(shown.lag.batches_waiting).toBe(1);
    expect(shown.upkeep.last_run).not.toBeNull();
    expect(status.sinks.find((s) => s.id === stalled.id)).toMatchObject({ last_day: { failed_rolls: 2, failure_reasons: { table_unsupported: 2 } }, roll_error: { code: 'table_unsupported', attempts: 2 } });

    const html = await fetch(`${stack.apiUrl}/status`);
    expect(html.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(html.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(html.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(html.headers.get('referrer-policy')).toBe('no-referrer');
  });

  it('the rolled rows are in the table, as PyIceberg and DuckDB read them', async () => {
    const rows = await readBoth(stack, ns, 'events');
    expect(rows.map((r) => Number(r.x))).toEqual([1, 2, 3]);
  }, 120_000);

  it('asks for the key, then shows every sink with its lag, last roll, rejects, error and upkeep', async () => {
    await page.goto(`${stack.apiUrl}/status`, { waitUntil: 'domcontentloaded' });
    await page.waitForSelector('#key-form', { visible: true });
    expect(await (await page.$('#sinks'))!.isVisible()).toBe(false);
    await page.type('#key', stack.adminKey);
    await page.click('#key-form button[type=submit]');
    await page.waitForSelector(`tr[data-sink="${rolled.id}"]`, { visible: true });
    expect(await (await page.$('#key-form'))!.isVisible()).toBe(false);

    const row = await rowOf(rolled.id);
    expect(row.name).toBe(`${rolled.name} garden · ${ns}.events`);
    expect(row.state).toBe('active');
    expect(row.lag).toMatch(new RegExp(`^${D} policy 1 min$`));
    expect(row.batches).toBe('1');
    expect(row.bytes).toMatch(/^\d+ B$/);
    expect(row.last_roll).toMatch(new RegExp(`^${D} ago 2 batches, 3 rows$`));
    expect(row.roll_seconds).toMatch(new RegExp(`^${D}$`));
    expect(row.rolls).toBe('1');
    expect(row.rejects).toBe('1');
    expect(row.error).toBe('–');
    expect(row.upkeep).toMatch(new RegExp(`^(done|nothing) ${D} ago, ${D}, files \\d+→\\d+$`));

    const stuck = await rowOf(stalled.id);
    expect(stuck.state).toBe('stalled');
    expect(stuck.last_roll).toBe('never');
    expect(stuck.rolls).toBe('0 +2 failed');
    expect(stuck.error).toMatch(/^table_unsupported: .*commit\.manifest\.min-count-to-merge must be an integer.* since .* ago, 2 failed rolls, last .* ago$/);
    expect(await page.$eval('#summary', (p) => p.textContent)).toBe('2 sinks · 1 stalled · 2 batches waiting');
    expect(await page.title()).toBe('(1 stalled) tablemere sinks: status');

    // The key lives in this tab's sessionStorage and in no URL the browser asked for.
    expect(await page.evaluate(() => sessionStorage.getItem('tablemere.status.admin-key'))).toBe(stack.adminKey);
    expect(requested.filter((url) => url.includes(stack.adminKey))).toEqual([]);
    expect(requested.some((url) => url.endsWith('/v1/status'))).toBe(true);
  });

  it('sorts by a column, both ways', async () => {
    const byName = [rolled, stalled].sort((a, b) => (a.name < b.name ? -1 : 1)).map((s) => s.id);
    expect(await rowOrder()).toEqual(byName);
    await page.click('th[data-key="name"]');
    expect(await rowOrder()).toEqual([...byName].reverse());
    await page.click('th[data-key="rejects"]');
    expect(await rowOrder()).toEqual([stalled.id, rolled.id]);
    await page.click('th[data-key="rejects"]');
    expect(await rowOrder()).toEqual([rolled.id, stalled.id]);
    expect(await page.$eval('th[data-key="rejects"]', (th) => th.getAttribute('aria-sort'))).toBe('descending');
  });

  it('refreshes on its own', async () => {
    await send(stack, rolled, 'b-4', [{ x: 5 }]);
    await page.waitForFunction((id) => document.querySelector(`tr[data-sink="${id}"] td:nth-child(4)`)?.textContent === '2', { timeout: 15_000 }, rolled.id);
  }, 20_000);

  it('screenshots as a filled table', async () => {
    const png = Buffer.from(await page.screenshot({ type: 'png' }));
    const file = path.join(tmpdir(), `tablemere-status-page-${suffix()}.png`);
    writeFileSync(file, png);
    console.log(`status page screenshot: ${file}`);
    // PNG signature, then IHDR's width and height: the viewport's.
    expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([VIEWPORT.width, VIEWPORT.height]);

    // Chromium decodes its own screenshot in a blank page: the table's area is not one colour.
    const table = await page.$eval('#sinks', (t) => {
      const r = t.getBoundingClientRect();
      return { x: Math.round(r.x), y: Math.round(r.y), width: Math.round(r.width), height: Math.round(r.height) };
    });
    expect(table.height).toBeGreaterThan(80);
    const blank = await browser.newPage();
    const pixels = await blank.evaluate(async (data: string, area: typeof table) => {
      const image = new Image();
      image.src = `data:image/png;base64,${data}`;
      await image.decode();
      const canvas = document.createElement('canvas');
      canvas.width = image.width;
      canvas.height = image.height;
      const context = canvas.getContext('2d')!;
      context.drawImage(image, 0, 0);
      const { data: rgba } = context.getImageData(area.x, area.y, area.width, area.height);
      const colours = new Set<number>();
      let dark = 0;
      for (let i = 0; i < rgba.length; i += 4) {
        colours.add((rgba[i]! << 16) | (rgba[i + 1]! << 8) | rgba[i + 2]!);
        if (rgba[i]! + rgba[i + 1]! + rgba[i + 2]! < 300) dark += 1;
      }
      return { colours: colours.size, darkShare: dark / (rgba.length / 4) };
    }, png.toString('base64'), table);
    await blank.close();
    // Text in several colours (names, badges, errors) on white and grey: many shades, some ink.
    expect(pixels.colours).toBeGreaterThan(50);
    expect(pixels.darkShare).toBeGreaterThan(0.01);
  });

  it('forgets the key on request, and a refused key sends the operator back to the form', async () => {
    await page.click('#forget');
    expect(await page.evaluate(() => sessionStorage.getItem('tablemere.status.admin-key'))).toBeNull();
    expect(await (await page.$('#sinks'))!.isVisible()).toBe(false);
    await page.type('#key', `tm_key_000000000000_${'A'.repeat(43)}`);
    await page.click('#key-form button[type=submit]');
    await page.waitForSelector('#problem', { visible: true });
    expect(await (await page.$('#key-form'))!.isVisible()).toBe(true);
    expect(await page.$eval('#problem', (p) => p.textContent)).toMatch(/unknown or revoked/);
    expect(await page.evaluate(() => sessionStorage.getItem('tablemere.status.admin-key'))).toBeNull();
  });

  it('drops an answer that arrives after its key was forgotten', async () => {
    // A refresh in flight when the operator presses Forget: its answer is held until then.
    let holding = false;
    let release: (() => Promise<void>) | undefined;
    await page.setRequestInterception(true);
    const hold = (request: HTTPRequest): void => {
      if (holding && release === undefined && request.url().endsWith('/v1/status')) release = () => request.continue();
      else void request.continue();
    };
    page.on('request', hold);
    try {
      await page.type('#key', stack.adminKey);
      await page.click('#key-form button[type=submit]');
      await page.waitForSelector(`tr[data-sink="${rolled.id}"]`, { visible: true });
      holding = true;
      await page.click('#refresh');
      for (let waited = 0; release === undefined; waited += 20) {
        if (waited > 5000) throw new Error('the page sent no status request');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await page.click('#forget');
      const answered = page.waitForResponse((response) => response.url().endsWith('/v1/status'));
      await release();
      expect((await answered).status()).toBe(200);
      // The page has read the answer once a task queued after it has run.
      await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 100)));
      expect(await (await page.$('#sinks'))!.isVisible()).toBe(false);
      expect(await (await page.$('#key-form'))!.isVisible()).toBe(true);
      expect(await page.evaluate(() => sessionStorage.getItem('tablemere.status.admin-key'))).toBeNull();
    } finally {
      page.off('request', hold);
      await page.setRequestInterception(false);
    }
  });
});
