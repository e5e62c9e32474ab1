import { SinkRef, WarehouseName } from '@tablemere/contracts';
import type { Readable, Writable } from 'node:stream';
import type { Command } from 'commander';
import type { ApiClient } from './api-client.ts';
import { usageError } from './errors.ts';
import type { Output } from './output.ts';

/** What every command gets: where to print, and the API configured for this invocation. */
export interface CommandContext {
  readonly out: Output;
  /**
   * The API client, configured from the command's global flags, the environment and the
   * checkout's `.stack/env`. Commands call it only once their own input is checked, so a usage
   * error is reported first and the API is never called with a request known to be bad.
   */
  api(command: Command): ApiClient;
  /** The API URL alone, from the same places (no API key needed). */
  apiUrl(command: Command): string;
  /** The environment, for variables a single command reads (TABLEMERE_SEND_KEY). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Standard input, for `sink send -`. */
  stdin(): AsyncIterable<Uint8Array>;
  /** The process's standard input and output as streams, for `tablemere mcp`'s protocol; undefined in tests that capture text. */
  readonly protocol: { readonly input: Readable; readonly output: Writable } | undefined;
  /** The terminal to draw progress on; undefined when stderr is not a terminal. */
  readonly terminal: NodeJS.WriteStream | undefined;
  /** The clock ages are measured against. */
  now(): Date;
}

/** A warehouse name the user typed (the API's `{warehouse}`), checked and ready for a URL path. */
export function warehouseSegment(warehouse: string): string {
  const name = WarehouseName.safeParse(warehouse);
  if (!name.success) throw usageError(`warehouse '${warehouse}': ${name.error.issues[0]?.message ?? 'invalid name'}`);
  return encodeURIComponent(name.data);
}

/** A sink id (`snk_…`) or name the user typed, checked and ready for a URL path. */
export function sinkSegment(sink: string): string {
  const ref = SinkRef.safeParse(sink);
  if (!ref.success) throw usageError(`sink '${sink}': give its id (snk_ and 12 hex digits) or its name (lowercase letters, digits, "_" or "-")`);
  return encodeURIComponent(ref.data);
}
