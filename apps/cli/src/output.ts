import { CliError, exitCodes } from './errors.ts';

/** Where a command writes; the entry point binds it to the process, tests may capture it. */
export interface Io {
  stdout(text: string): void;
  stderr(text: string): void;
}

export class Output {
  constructor(private readonly io: Io) {}

  /** Human-readable lines on stdout. */
  lines(lines: readonly string[]): void {
    this.io.stdout(lines.map((line) => `${line}\n`).join(''));
  }

  /** A remark for the person at the terminal, on stderr so it never mixes with results. */
  note(line: string): void {
    this.io.stderr(`${line}\n`);
  }

  /** A value as indented JSON on stdout (the `--json` mode of every command). */
  json(value: unknown): void {
    this.io.stdout(`${JSON.stringify(value, null, 2)}\n`);
  }

  /**
   * Reports a failure as one line on stderr and answers the exit code. Anything that is not a
   * CliError is a fault of the CLI: still one line, never a stack trace.
   */
  failure(error: unknown): number {
    const known = error instanceof CliError ? error : new CliError('internal', `internal: ${describe(error)}`);
    this.io.stderr(`error: ${oneLine(known.message)}\n`);
    return exitCodes[known.kind];
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}

/** Pads each column of a small table to its widest cell. */
export function columns(rows: readonly (readonly string[])[], indent = ''): string[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows.map((row) => indent + row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  '));
}
