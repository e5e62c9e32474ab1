/**
 * No dead link in the documents: README.md, docs/**, the apps' and packages' READMEs, ops/*.md
 * (scripts/docs-links.ts says what is checked and how). Needs no stack and no network.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { deadLinks, documentFiles, formatDeadLinks } from '../scripts/docs-links.ts';

describe('Markdown links', () => {
  it('every relative link, anchor and URL of the documents leads somewhere', () => {
    const files = documentFiles();
    expect(files).toContain('README.md');
    const dead = deadLinks(undefined, files);
    // The first line names them all too: npm test's summary repeats only a failure's first line.
    const oneLine = dead.map((d) => `${d.file}:${d.line} → ${d.target}`).join('; ');
    expect(dead.length, `${dead.length} dead links (file:line → target): ${oneLine}\n${formatDeadLinks(dead)}\n`).toBe(0);
  });
});

describe('the link check itself', () => {
  const root = mkdtempSync(path.join(tmpdir(), 'docs-links-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const write = (rel: string, text: string) => {
    mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    writeFileSync(path.join(root, rel), text);
  };

  it('finds GitHub heading slugs, repeats, explicit anchors, and skips code', () => {
    write(
      'README.md',
      [
        '# Tablemere: sinks & tables',
        '## The `send` route (v2)',
        '## Repeat',
        '## Repeat',
        '<a id="by-hand"></a>',
        '[ok](#tablemere-sinks--tables) [ok](#the-send-route-v2) [ok](#repeat-1) [ok](#by-hand)',
        '[ok](docs/guide.md#named) [ok](docs/guide.md) [ok](docs/) [ok](https://example.com/a?b#c) [ok](mailto:x@example.com)',
        '[dead](#repeat-2)',
        '[dead](docs/guide.md#nowhere)',
        '[dead](docs/missing.md)',
        '[dead](https://)',
        '[dead](../outside.md)',
        '[ref link][r]',
        '',
        '[r]: docs/gone.md',
        '',
        '```sh',
        'echo [not a link](nowhere.md)',
        '```',
        'and `[not a link](nowhere.md)` inline',
        '<img src="docs/no.png">',
        '',
      ].join('\n'),
    );
    write('docs/guide.md', '# Guide\n\n<a name="named"></a>\n');
    const dead = deadLinks(root, ['README.md', 'docs/guide.md']);
    expect(dead.map((d) => `${d.line} ${d.target}`)).toEqual([
      '8 #repeat-2',
      '9 docs/guide.md#nowhere',
      '10 docs/missing.md',
      '11 https://',
      '12 ../outside.md',
      '15 docs/gone.md',
      '21 docs/no.png',
    ]);
    expect(formatDeadLinks(dead.slice(0, 1))).toBe('README.md:8 → #repeat-2 (no such heading or anchor in this file)');
  });
});
