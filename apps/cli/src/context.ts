import { WarehouseName } from '@tablemere/contracts';
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
}

/** A catalog name the user typed, checked and ready for a URL path. */
export function catalogSegment(catalog: string): string {
  const name = WarehouseName.safeParse(catalog);
  if (!name.success) throw usageError(`catalog '${catalog}': ${name.error.issues[0]?.message ?? 'invalid name'}`);
  return encodeURIComponent(name.data);
}
