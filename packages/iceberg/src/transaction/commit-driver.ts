import type { RestCatalog } from '../catalog/rest/client.ts';
import type { LoadTableResult, TableIdent, TableRequirement, TableUpdate } from '../catalog/rest/types.ts';
import { IcebergError, isIcebergError } from '../errors.ts';
import type { FileIO } from '../io/file-io.ts';
import type { TableMetadata } from '../spec/metadata.ts';
import { IO_WIDTH, mapBounded } from './bounded.ts';
import type { Landed } from './landed.ts';
import { backoffMs, DEFAULT_RETRY_POLICY, sleep, type RetryPolicy } from './retry.ts';

/** What `build` is given for one commit attempt. */
export interface CommitContext {
  /** The table as just (re)loaded: the same table (uuid) as the first load, of a format version the operation takes. */
  metadata: TableMetadata;
  /** 1 for the first attempt. */
  attempt: number;
  /** When the driver started (epoch ms): no commit of this operation can have landed before. */
  startedAt: number;
  /**
   * Records a file the operation wrote (data file, manifest, manifest list). Once the operation
   * ends, the driver deletes every recorded file that no kept metadata can reference.
   */
  wrote(location: string): void;
}

/** One commit attempt, built on `CommitContext.metadata`. */
export interface CommitAttempt<T> {
  /** The driver adds `assert-table-uuid`. */
  requirements: TableRequirement[];
  updates: TableUpdate[];
  /** The recorded files this commit makes reachable; the others are deleted once it lands. */
  references?: readonly string[];
  /** Of those, the ones no other attempt uses (its manifest list): deleted as soon as the catalog rejects it. */
  ownFiles?: readonly string[];
  /**
   * After its answer was lost: whether this attempt landed, read from the reloaded table.
   * Without it such an attempt is reported `commit_state_unknown`.
   */
  landed?: (metadata: TableMetadata) => Landed | Promise<Landed>;
  /** The operation's result once this attempt landed, given the table after it and the attempts made. */
  result: (metadata: TableMetadata, attempts: number, found: boolean) => T | Promise<T>;
}

/** `build`'s answer when the table needs no commit (anymore). */
export interface NothingToDo<T> {
  nothingToDo: T;
}

/**
 * The table format versions a snapshot of data files is written for: a v1 table has no
 * sequence numbers, so its manifests cannot carry what appends and rewrites inherit.
 */
export const DATA_FORMAT_VERSIONS: readonly number[] = [2, 3];

export interface CommitDriverOptions<T> {
  catalog: RestCatalog;
  table: TableIdent;
  /** Where recorded files are deleted; an operation that writes none (a schema change) needs none. */
  io?: FileIO;
  /** For messages: "append", "rewrite", "snapshot expiry", ... */
  operation: string;
  /** The table format versions the operation writes; another version fails `unsupported`. */
  formatVersions: readonly number[];
  /** The table as last loaded; loaded when omitted. */
  base?: Pick<LoadTableResult, 'metadata'>;
  retry?: Partial<RetryPolicy>;
  /** Builds the commit on the fresh table, once per attempt; throw to abandon the operation. */
  build: (context: CommitContext) => Promise<CommitAttempt<T> | NothingToDo<T>>;
  /** Told about each failed attempt that will be retried. */
  onRetry?: (event: { attempt: number; error: IcebergError; delayMs: number }) => void;
}

/** The driver options an operation takes from its caller as they are. */
export type PassedOn = Pick<CommitDriverOptions<unknown>, 'catalog' | 'table' | 'io' | 'base' | 'retry' | 'onRetry'>;

/** Those of `options`, and only those (an operation's options hold more). */
export function passedOn(options: PassedOn): PassedOn {
  const { catalog, table, io, base, retry, onRetry } = options;
  return { catalog, table, io, base, retry, onRetry };
}

/**
 * The one commit loop of this package: load the table, check it is the same table and of a
 * format version the operation writes, build the commit on it, commit. A lost race (409) reloads
 * and builds again, after a backoff (retry.ts). A lost answer (5xx, timeout, reset) reloads and
 * asks every attempt whose answer was lost whether it landed (`CommitAttempt.landed`): one that
 * did ends the operation as committed; if none can tell, `commit_state_unknown` is thrown rather
 * than risk committing twice.
 *
 * Recorded files (`CommitContext.wrote`) that no kept metadata can reference are deleted when
 * the operation ends: after it landed, all but those of the landed attempt (an earlier attempt
 * asserted a head that is gone, so it cannot land any more); after it was abandoned, all but
 * those of attempts whose answer was lost (one may yet land).
 */
export async function commitWithRetries<T>(options: CommitDriverOptions<T>): Promise<T> {
  const { catalog, table, io } = options;
  const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
  const startedAt = Date.now();
  const written = new Set<string>();
  const lost: Array<CommitAttempt<T>> = [];
  const context = (metadata: TableMetadata, attempt: number): CommitContext => ({ metadata, attempt, startedAt, wrote: (location) => written.add(location) });
  try {
    let metadata = checkFormat(options, (options.base ?? (await catalog.loadTable(table))).metadata);
    const uuid = metadata['table-uuid'];
    let lastError: IcebergError | undefined;
    for (let attempt = 1; attempt <= policy.attempts; attempt++) {
      const built = await options.build(context(metadata, attempt));
      if ('nothingToDo' in built) {
        await deleteUnreferenced(io, written, lost);
        return built.nothingToDo;
      }
      try {
        const committed = await catalog.commitTable(table, {
          requirements: [{ type: 'assert-table-uuid', uuid }, ...built.requirements.filter((r) => r.type !== 'assert-table-uuid')],
          updates: built.updates,
        });
        await deleteUnreferenced(io, written, [built]);
        return await built.result(committed.metadata, attempt, false);
      } catch (error) {
        if (!isIcebergError(error) || (error.kind !== 'commit_conflict' && error.kind !== 'commit_state_unknown')) throw error;
        lastError = error;
        if (error.kind === 'commit_state_unknown') lost.push(built);
        else await deleteFiles(io, forget(written, built.ownFiles ?? []));
      }
      // A last rejection needs no reload; a last lost answer does, to settle it.
      if (attempt === policy.attempts && lost.length === 0) break;
      if (attempt < policy.attempts) {
        const delayMs = backoffMs(policy, attempt);
        options.onRetry?.({ attempt, error: lastError, delayMs });
        await sleep(delayMs);
      }
      metadata = await reload(options, policy, lastError, lost.length > 0);
      if (metadata['table-uuid'] !== uuid) {
        throw new IcebergError('validation_failed', `table ${table.name} was replaced (uuid ${uuid}, now ${metadata['table-uuid']}) during the ${options.operation}`);
      }
      checkFormat(options, metadata);
      const found = await landedAttempts(lost, metadata, lastError, attempt);
      if (found.length > 0) {
        await deleteUnreferenced(io, written, found);
        return await found[found.length - 1]!.result(metadata, attempt, true);
      }
    }
    throw lastError ?? new IcebergError('commit_conflict', `${options.operation} gave up`);
  } catch (error) {
    await deleteUnreferenced(io, written, lost);
    throw error;
  }
}

function checkFormat(options: CommitDriverOptions<unknown>, metadata: TableMetadata): TableMetadata {
  const version = metadata['format-version'];
  if (!options.formatVersions.includes(version)) {
    throw new IcebergError('unsupported', `table format version ${version} is not supported for the ${options.operation}; only ${versions(options.formatVersions)} tables`);
  }
  return metadata;
}

/** "version 2", "versions 2 and 3", "versions 1, 2 and 3". */
function versions(list: readonly number[]): string {
  if (list.length === 1) return `version ${list[0]}`;
  return `versions ${list.slice(0, -1).join(', ')} and ${list[list.length - 1]}`;
}

/**
 * The attempts whose answer was lost that the table shows landed (more than one only when it
 * cannot tell which of them did). None: all surely did not, so far. An attempt the table cannot
 * settle ends the operation: committing again could commit twice.
 */
async function landedAttempts<T>(lost: ReadonlyArray<CommitAttempt<T>>, metadata: TableMetadata, lastError: IcebergError, attempts: number): Promise<Array<CommitAttempt<T>>> {
  const verdicts = await Promise.all(lost.map(async (attempt) => (attempt.landed ? attempt.landed(metadata) : 'unknown')));
  const found = lost.filter((_, i) => verdicts[i] === 'landed');
  if (found.length > 0 || !verdicts.includes('unknown')) return found;
  throw new IcebergError(
    'commit_state_unknown',
    `${lastError.message}: outcome unknown after ${attempts} attempts, and the table keeps no history that shows whether it landed`,
    { cause: lastError },
  );
}

/** Reloads the table, waiting out a short catalog outage within the retry policy. Without a reload a lost answer stays lost: that is what is reported then. */
async function reload(options: CommitDriverOptions<unknown>, policy: RetryPolicy, lastError: IcebergError, answerLost: boolean): Promise<TableMetadata> {
  for (let attempt = 1; ; attempt++) {
    try {
      return (await options.catalog.loadTable(options.table)).metadata;
    } catch (error) {
      if (isIcebergError(error, 'unavailable') && attempt < policy.attempts) {
        await sleep(backoffMs(policy, attempt));
        continue;
      }
      throw answerLost ? lastError : error;
    }
  }
}

/** Deletes the recorded files that none of `kept` references. A failed delete costs storage, not correctness. */
async function deleteUnreferenced(io: FileIO | undefined, written: Set<string>, kept: ReadonlyArray<CommitAttempt<unknown>>): Promise<void> {
  const referenced = new Set(kept.flatMap((attempt) => attempt.references ?? []));
  await deleteFiles(io, forget(written, [...written].filter((location) => !referenced.has(location))));
}

/** Takes `locations` out of the recorded files, and returns them. */
function forget(written: Set<string>, locations: readonly string[]): string[] {
  for (const location of locations) written.delete(location);
  return [...locations];
}

async function deleteFiles(io: FileIO | undefined, locations: readonly string[]): Promise<void> {
  if (io === undefined || locations.length === 0) return;
  await mapBounded(locations, { width: IO_WIDTH }, async (location) => {
    try {
      await io.delete(location);
    } catch {
      // An orphaned file costs storage, not correctness.
    }
  });
}
