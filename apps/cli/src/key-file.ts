import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, linkSync, openSync, readFileSync, renameSync, unlinkSync, writeSync, fchmodSync } from 'node:fs';
import path from 'node:path';
import { type CreatedSink, SendKey, SinkId, sinkIdOfSendKey } from '@tablemere/contracts';
import { z } from 'zod';
import { CliError, firstIssue, usageError } from './errors.ts';

/**
 * What `sink create --save FILE` writes and `sink send --send-key-file FILE` reads: JSON, mode
 * 0600. The ingest URL travels with the key, so a producer machine needs this file and nothing
 * else (no API key, no API URL).
 */
export const KeyFile = z.object({
  format: z.literal('tablemere-send-key/1'),
  sink_id: SinkId,
  sink_name: z.string(),
  warehouse: z.string(),
  table: z.string(),
  ingest_url: z.url({ protocol: /^https?$/ }),
  send_key: SendKey,
});
export type KeyFile = z.infer<typeof KeyFile>;

/** The key file of a sink just created (the only answer holding its send key). */
export function keyFileOf(sink: CreatedSink): KeyFile {
  return {
    format: 'tablemere-send-key/1',
    sink_id: sink.id,
    sink_name: sink.name,
    warehouse: sink.warehouse,
    table: sink.table,
    ingest_url: sink.ingest_url,
    send_key: sink.send_key,
  };
}

const OWNER_ONLY = 0o600;

/**
 * A key file claimed before the sink is created, so the key (shown by the API once) always has
 * somewhere to go: an empty file of mode 0600 beside the target, moved into place by `commit`.
 * Without `force` an existing target is refused now and, should one appear meanwhile, again at
 * `commit` (a hard link never replaces a file).
 */
export class PendingKeyFile {
  private constructor(
    readonly target: string,
    private readonly temp: string,
    private readonly fd: number,
    private readonly force: boolean,
  ) {}

  static claim(target: string, force: boolean): PendingKeyFile {
    const resolved = path.resolve(target);
    if (!force && existsSync(resolved)) {
      throw usageError(`--save ${target}: the file exists; pass --force to replace it`);
    }
    const temp = path.join(path.dirname(resolved), `.${path.basename(resolved)}.${randomBytes(4).toString('hex')}.tmp`);
    let fd: number;
    try {
      fd = openSync(temp, 'wx', OWNER_ONLY);
      // The umask can only take bits away; set the mode exactly anyway.
      fchmodSync(fd, OWNER_ONLY);
    } catch (error) {
      throw usageError(`--save ${target}: cannot write there (${errorCode(error)})`);
    }
    return new PendingKeyFile(resolved, temp, fd, force);
  }

  /** Writes the key and moves the file into place. */
  commit(content: KeyFile): void {
    const created = `sink ${content.sink_name} (${content.sink_id}) was created`;
    try {
      writeSync(this.fd, `${JSON.stringify(content, null, 2)}\n`);
      fsyncSync(this.fd);
      closeSync(this.fd);
    } catch (error) {
      this.abandon();
      // The key is not printed instead: --save promises it never reaches the terminal.
      throw new CliError('internal', `${created} but its key could not be written to ${this.target} (${errorCode(error)}); delete the sink and create it again`);
    }
    try {
      if (this.force) renameSync(this.temp, this.target);
      else {
        linkSync(this.temp, this.target);
        unlinkSync(this.temp);
      }
    } catch (error) {
      // The key is safe in the claimed file; say where rather than lose it.
      throw usageError(`${created}, but ${this.target} could not be written (${errorCode(error)}); its key file is ${this.temp} (mode 0600)`);
    }
  }

  /** Removes the claimed file when the sink was not created. */
  abandon(): void {
    try {
      closeSync(this.fd);
    } catch {
      // already closed by a failed commit
    }
    try {
      unlinkSync(this.temp);
    } catch {
      // nothing left to remove
    }
  }
}

/** Reads a key file written by `sink create --save`; its key must belong to its sink id. */
export function readKeyFile(file: string): KeyFile {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw usageError(`--send-key-file ${file}: cannot read it (${errorCode(error)})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw usageError(`--send-key-file ${file}: not a key file written by 'tablemere sink create --save' (not JSON)`);
  }
  const parsed = KeyFile.safeParse(json);
  if (!parsed.success) {
    throw usageError(`--send-key-file ${file}: not a key file written by 'tablemere sink create --save' (${firstIssue(parsed.error)})`);
  }
  if (sinkIdOfSendKey(parsed.data.send_key) !== parsed.data.sink_id) {
    throw usageError(`--send-key-file ${file}: its send key belongs to another sink than ${parsed.data.sink_id}`);
  }
  return parsed.data;
}

function errorCode(error: unknown): string {
  return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string'
    ? error.code
    : error instanceof Error
      ? error.message
      : String(error);
}
