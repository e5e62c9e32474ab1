import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** `.stack/env`, or `$TABLEMERE_STACK_DIR/env` for a stack kept elsewhere. */
export const stackEnvFile = path.join(process.env.TABLEMERE_STACK_DIR ? path.resolve(process.env.TABLEMERE_STACK_DIR) : path.join(repoRoot, '.stack'), 'env');

/** Parses the `export NAME='value'` lines the local stack writes. */
export function parseEnvFile(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^export ([A-Z0-9_]+)='((?:[^']|'\\'')*)'$/.exec(line.trim());
    if (m) env[m[1]!] = m[2]!.replaceAll(`'\\''`, `'`);
  }
  return env;
}

/**
 * The running stack's variables. Integration tests call this and fail loudly when the
 * stack is missing: they never skip.
 */
export function stackEnv(): Record<string, string> {
  let text: string;
  try {
    text = readFileSync(stackEnvFile, 'utf8');
  } catch {
    throw new Error(`the local stack is not running (${stackEnvFile} is missing): run \`npm start\` or \`npm test\``);
  }
  return parseEnvFile(text);
}
