import { chmodSync, writeFileSync } from 'node:fs';

/** Shell-safe single quoting: the file is meant to be `source`d. */
export function shellQuote(value: string): string {
  return `'${value.replaceAll(`'`, `'\\''`)}'`;
}

/** Writes `export NAME='value'` lines, mode 0600 since it holds the stack's keys. */
export function writeEnvFile(file: string, vars: Record<string, string>, header: string): void {
  const lines = Object.entries(vars).map(([k, v]) => `export ${k}=${shellQuote(v)}`);
  writeFileSync(file, `# ${header}\n${lines.join('\n')}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
}
