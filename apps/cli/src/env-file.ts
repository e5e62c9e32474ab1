import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** Where the local stack writes its variables, relative to the repository root. */
export const stackEnvPath = path.join('.stack', 'env');

/**
 * Parses the `export NAME='value'` lines the local stack writes. A value is single-quoted; a
 * quote inside it is written `'\''` (close, escaped quote, reopen), as a shell would read it.
 * Blank lines, comments and anything else are ignored.
 */
export function parseEnvFile(text: string): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const match = /^\s*export\s+([A-Za-z_][A-Za-z0-9_]*)='((?:[^']|'\\'')*)'\s*$/.exec(line);
    if (match) vars[match[1]!] = match[2]!.replaceAll(`'\\''`, `'`);
  }
  return vars;
}

/** The nearest `.stack/env` at or above `startDir`, if any. */
export function findStackEnv(startDir: string): string | undefined {
  let dir = path.resolve(startDir);
  for (;;) {
    const candidate = path.join(dir, stackEnvPath);
    if (existsSync(candidate)) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/** The variables of the nearest `.stack/env` above `startDir`; empty outside a checkout. */
export function loadStackEnv(startDir: string): Record<string, string> {
  const file = findStackEnv(startDir);
  return file === undefined ? {} : parseEnvFile(readFileSync(file, 'utf8'));
}
