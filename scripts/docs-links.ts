/**
 * The Markdown link check (`npm test` runs it: tests/docs-links.test.ts; by hand:
 * `node scripts/node-runtime.mjs tsx scripts/docs-links.ts`). Over the project's documents
 * (README.md, docs/**, the apps' and packages' READMEs, ops/*.md), every link and image:
 *   - a relative path must name a file or folder of the repository;
 *   - a `#fragment`, in the same file or in another Markdown file, must be an anchor there: a
 *     heading's slug by GitHub's rules (github-slugger: lowercased, punctuation dropped,
 *     spaces to "-", "-1", "-2" for repeats) or an explicit `<a id=…>` / `name=…`;
 *   - an http(s) link is not fetched (the test runs without a network) but must be a
 *     well-formed URL with a host.
 * Markdown is parsed as GitHub does (CommonMark and GFM: mdast-util-from-markdown), so links
 * in code blocks and code spans are not links; reference links are checked at their definition.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import GithubSlugger from 'github-slugger';
import { fromMarkdown } from 'mdast-util-from-markdown';
import { gfmFromMarkdown } from 'mdast-util-gfm';
import { toString } from 'mdast-util-to-string';
import { gfm } from 'micromark-extension-gfm';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The documents checked, as repository paths. */
export function documentFiles(root = repoRoot): string[] {
  const files: string[] = [];
  const add = (rel: string) => {
    if (existsSync(path.join(root, rel))) files.push(rel);
  };
  const markdownIn = (dir: string, deep: boolean) => {
    const abs = path.join(root, dir);
    if (!existsSync(abs)) return;
    for (const entry of readdirSync(abs, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const rel = path.posix.join(dir, entry.name);
      if (entry.isDirectory() && deep) markdownIn(rel, deep);
      else if (entry.isFile() && entry.name.endsWith('.md')) files.push(rel);
    }
  };
  const readmesIn = (dir: string) => {
    const abs = path.join(root, dir);
    if (!existsSync(abs)) return;
    for (const entry of readdirSync(abs, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (entry.isDirectory()) add(path.posix.join(dir, entry.name, 'README.md'));
    }
  };
  add('README.md');
  markdownIn('docs', true);
  readmesIn('apps');
  readmesIn('packages');
  markdownIn('ops', false);
  return files;
}

/** One link that leads nowhere. */
export interface DeadLink {
  /** Repository path of the document. */
  file: string;
  line: number;
  target: string;
  why: string;
}

interface MdNode {
  type: string;
  url?: string;
  value?: string;
  children?: MdNode[];
  position?: { start: { line: number } };
}

interface Parsed {
  anchors: Set<string>;
  links: { url: string; line: number }[];
}

/** `<a id="x">`, `<a name="x">`, any element's id: GitHub keeps them as anchors. */
const HTML_ANCHOR = /\s(?:id|name)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))/gi;
/** `href=`/`src=` of raw HTML (`<a href>`, `<img src>`): links too. */
const HTML_LINK = /\s(?:href|src)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))/gi;

function parse(text: string): Parsed {
  const tree = fromMarkdown(text, { extensions: [gfm()], mdastExtensions: [gfmFromMarkdown()] }) as MdNode;
  const slugger = new GithubSlugger();
  const anchors = new Set<string>();
  const links: Parsed['links'] = [];
  const walk = (node: MdNode) => {
    const line = node.position?.start.line ?? 0;
    if (node.type === 'heading') anchors.add(slugger.slug(toString(node, { includeHtml: false })));
    if ((node.type === 'link' || node.type === 'image' || node.type === 'definition') && node.url !== undefined) links.push({ url: node.url, line });
    if (node.type === 'html' && node.value) {
      for (const m of node.value.matchAll(HTML_ANCHOR)) anchors.add(m[1] ?? m[2] ?? m[3] ?? '');
      // A comment is not a link.
      const html = node.value.replace(/<!--[\s\S]*?-->/g, '');
      for (const m of html.matchAll(HTML_LINK)) links.push({ url: decodeEntities(m[1] ?? m[2] ?? m[3] ?? ''), line });
    }
    for (const child of node.children ?? []) walk(child);
  };
  walk(tree);
  return { anchors, links };
}

function decodeEntities(value: string): string {
  return value.replace(/&amp;/g, '&').replace(/&quot;/g, '"').replace(/&#39;/g, "'");
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/** Every dead link of the documents (`files`: repository paths; by default documentFiles()). */
export function deadLinks(root = repoRoot, files = documentFiles(root)): DeadLink[] {
  const cache = new Map<string, Parsed>();
  const parsed = (abs: string): Parsed => {
    let entry = cache.get(abs);
    if (!entry) {
      entry = parse(readFileSync(abs, 'utf8'));
      cache.set(abs, entry);
    }
    return entry;
  };
  const dead: DeadLink[] = [];
  for (const file of files) {
    const abs = path.join(root, file);
    for (const { url, line } of parsed(abs).links) {
      const report = (why: string) => dead.push({ file, line, target: url, why });
      if (/^https?:/i.test(url)) {
        const problem = externalProblem(url);
        if (problem) report(problem);
        continue;
      }
      // mailto:, s3://, data: and the like: not a document of this repository, not checked.
      if (/^[a-z][a-z0-9+.-]*:/i.test(url)) continue;
      if (url.startsWith('//')) {
        report('a scheme-relative URL: write https://');
        continue;
      }
      const hash = url.indexOf('#');
      const pathPart = safeDecode((hash === -1 ? url : url.slice(0, hash)).split('?')[0]!);
      const fragment = hash === -1 ? undefined : safeDecode(url.slice(hash + 1));
      let targetAbs = abs;
      if (pathPart !== '') {
        targetAbs = pathPart.startsWith('/') ? path.join(root, pathPart) : path.resolve(path.dirname(abs), pathPart);
        const inside = path.relative(root, targetAbs);
        if (inside.startsWith('..') || path.isAbsolute(inside)) {
          report('outside the repository');
          continue;
        }
        if (!existsSync(targetAbs)) {
          report('no such file');
          continue;
        }
      }
      if (fragment === undefined || fragment === '') continue;
      if (!targetAbs.endsWith('.md') || !statSync(targetAbs).isFile()) continue; // #L12 of a source file, a folder: not checked
      const anchor = fragment.replace(/^user-content-/, '');
      if (!parsed(targetAbs).anchors.has(anchor)) report(pathPart === '' ? 'no such heading or anchor in this file' : `no such heading or anchor in ${path.relative(root, targetAbs)}`);
    }
  }
  return dead;
}

/** Why an http(s) link is malformed, or undefined when it is a well-formed URL. */
export function externalProblem(url: string): string | undefined {
  if (/\s/.test(url)) return 'a URL with white space';
  let parsedUrl: URL;
  try {
    parsedUrl = new URL(url);
  } catch {
    return 'not a well-formed URL';
  }
  if (!/^https?:$/.test(parsedUrl.protocol)) return 'not a well-formed URL';
  if (!/^https?:\/\/[^/]/i.test(url) || parsedUrl.hostname === '') return 'a URL without a host';
  if (!/^(\[[0-9a-f:.]+\]|[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*)$/i.test(parsedUrl.hostname)) return 'a URL whose host is not a host name';
  return undefined;
}

/** One line per dead link: `file:line → target (why)`. */
export function formatDeadLinks(dead: DeadLink[]): string {
  return dead.map((d) => `${d.file}:${d.line} → ${d.target} (${d.why})`).join('\n');
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const files = documentFiles();
  const dead = deadLinks(repoRoot, files);
  if (dead.length === 0) {
    console.log(`${files.length} documents, no dead link`);
  } else {
    console.log(`${dead.length} dead links in ${files.length} documents:\n${formatDeadLinks(dead)}`);
    process.exitCode = 1;
  }
}
