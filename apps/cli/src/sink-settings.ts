import {
  BATCH_IDS_MODES,
  type BatchIds,
  KEEP_SNAPSHOTS_DEFAULT,
  KEEP_SNAPSHOTS_MAX,
  KEEP_SNAPSHOTS_MIN,
  KeepSnapshots,
  LINGER_MS_DEFAULT,
  LINGER_MS_MAX,
  LingerMs,
  MIN_SNAPSHOT_AGE_SECONDS_DEFAULT,
  MIN_SNAPSHOT_AGE_SECONDS_MAX,
  MinSnapshotAgeSeconds,
  UNKNOWN_FIELDS_MODES,
  type UnknownFields,
  type UpdateSinkRequest,
} from '@tablemere/contracts';
import { type Command, Option } from 'commander';
import type { z } from 'zod';
import { parseDuration } from './durations.ts';
import { usageError } from './errors.ts';
import { span } from './human.ts';
import { integerOption } from './options.ts';

/** The settings `sink create` and `sink update` both take, as flags. */
export interface SettingOptions {
  keepSnapshots?: number;
  minSnapshotAge?: number;
  unknownFields?: UnknownFields;
  lingerMs?: number;
  batchIds?: BatchIds;
}

/** `--min-snapshot-age`: a duration (`10m`, `1h`, `7d`), or 0 for none. */
function ageSeconds(text: string): number {
  return text.trim() === '0' ? 0 : parseDuration(text);
}

/** Adds the setting flags; `defaults` says them in the help (create), or not (update: unchanged unless given). */
export function settingOptions(command: Command, defaults: boolean): Command {
  const fallback = (text: string) => (defaults ? `; default ${text}` : '');
  return command
    .option(
      '--keep-snapshots <n>',
      `snapshots of the table upkeep keeps (${KEEP_SNAPSHOTS_MIN}-${KEEP_SNAPSHOTS_MAX}${fallback(String(KEEP_SNAPSHOTS_DEFAULT))})`,
      integerOption('--keep-snapshots'),
    )
    .option(
      '--min-snapshot-age <duration>',
      `upkeep never expires a snapshot younger than this, e.g. 10m, 1h, 7d, or 0 (at most ${span(MIN_SNAPSHOT_AGE_SECONDS_MAX)}${fallback(span(MIN_SNAPSHOT_AGE_SECONDS_DEFAULT))})`,
      ageSeconds,
    )
    .option(
      '--linger-ms <ms>',
      `how long a send may wait for others to share its intake object (0-${LINGER_MS_MAX}${fallback(String(LINGER_MS_DEFAULT))}): fewer store requests for that much latency`,
      integerOption('--linger-ms'),
    )
    .addOption(
      new Option('--unknown-fields <mode>', `a row field the table lacks: reject the row or add it as an optional column${fallback('reject')}`).choices(UNKNOWN_FIELDS_MODES),
    )
    .addOption(
      new Option(
        '--batch-ids <mode>',
        `a send without Idempotency-Key: refused (key), or named by its body so a resent body is a replay, for shippers with fixed headers; identical bodies are then one batch (content)${fallback('key')}`,
      ).choices(BATCH_IDS_MODES),
    );
}

/** The body fields the flags give, checked against the API's own bounds first. */
export function settingsBody(options: SettingOptions): UpdateSinkRequest {
  const body: UpdateSinkRequest = {};
  if (options.keepSnapshots !== undefined) body.keep_snapshots = checked(KeepSnapshots, options.keepSnapshots, '--keep-snapshots');
  if (options.minSnapshotAge !== undefined) body.min_snapshot_age_seconds = checked(MinSnapshotAgeSeconds, options.minSnapshotAge, '--min-snapshot-age');
  if (options.unknownFields !== undefined) body.unknown_fields = options.unknownFields;
  if (options.lingerMs !== undefined) body.linger_ms = checked(LingerMs, options.lingerMs, '--linger-ms');
  if (options.batchIds !== undefined) body.batch_ids = options.batchIds;
  return body;
}

function checked(schema: z.ZodNumber, value: number, flag: string): number {
  const result = schema.safeParse(value);
  if (!result.success) throw usageError(`${flag}: ${result.error.issues[0]?.message ?? 'invalid'}`);
  return result.data;
}
