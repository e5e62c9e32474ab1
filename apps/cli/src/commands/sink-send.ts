import { createReadStream, type Stats, statSync } from 'node:fs';
import { SEND_BODY_LIMIT, SEND_BODY_LIMIT_TEXT, SEND_KEY_FORMAT, SendKey, Sink, SINK_ID_PATTERN, sinkIdOfSendKey } from '@tablemere/contracts';
import type { Command } from 'commander';
import { type Batch, checkBatchId, maxRowBytes, packBatches } from '../batches.ts';
import { type CommandContext, sinkSegment } from '../context.ts';
import { CliError, usageError } from '../errors.ts';
import { count, plural, size } from '../human.ts';
import { scanRows } from '../json-input.ts';
import { readKeyFile } from '../key-file.ts';
import { counted, progressBar } from '../progress.ts';
import { COMPRESS_ABOVE_BYTES, type SendOutcome, type SendTarget, sendBatch, sinkIdOfTarget } from '../send-client.ts';

interface Options {
  sendKeyFile?: string;
  sendKey?: string;
  batchId?: string;
  json?: boolean;
  /** false with --no-compress. */
  compress?: boolean;
}

/** Refused rows listed on stderr at most; the totals count them all. */
const REASONS_SHOWN = 10;

export function addSinkSend(sink: Command, context: CommandContext): void {
  sink
    .command('send')
    .description(`send a JSON array or NDJSON file (or - for stdin) to a sink, in batches of at most ${SEND_BODY_LIMIT_TEXT}`)
    .usage('[<sink>] <file|-> (--send-key-file FILE | --send-key KEY | $TABLEMERE_SEND_KEY) [options]')
    .argument('[sink]', 'the sink name or id; optional, it must match the key (the key names its sink)')
    .argument('[input]', 'a JSON array or NDJSON file, or - for standard input')
    .option('--send-key-file <file>', "the key file 'sink create --save' wrote (it holds the ingest URL too)")
    .option('--send-key <key>', 'the send key itself (prefer the file or $TABLEMERE_SEND_KEY: flags show in process lists)')
    .option('--batch-id <id>', 'the batch id (Idempotency-Key) of a send that is one batch; more batches are <id>, <id>-2, <id>-3, ...')
    .option('--no-compress', `send every batch uncompressed (by default a batch of ${COMPRESS_ABOVE_BYTES / 1024} KiB or more goes compressed with zstd)`)
    .option('--json', 'print the results as JSON')
    .addHelpText(
      'after',
      `
Rows are sent as they are written, in order, split into batches of at most ${SEND_BODY_LIMIT_TEXT}; a file is
checked whole before anything is sent. Each batch id depends only on the input (by default the
start of the batch's SHA-256 and its part number), so running the same send again after a
failure stores nothing twice: batches already stored are answered from the intake's ledger.
429, 5xx and connection failures are retried, after the answer's Retry-After when it gives one,
else after 1, 2, 4, 8, 15 and 30 s; then the send stops (exit 3). A progress bar is drawn when
stderr is a terminal and a file spans several batches. Batches of ${COMPRESS_ABOVE_BYTES / 1024} KiB or more go compressed
(zstd; the intake's limit of ${SEND_BODY_LIMIT_TEXT} is on the rows, not on the compressed bytes): --no-compress
sends them as they are.

By default a batch is named by its content; --batch-id ID names the first batch ID exactly and
the others ID-2, ID-3, ... in input order (each is printed as it is stored).

The intake stores every element; those that are not JSON objects are named on stderr (exit 5)
and rejected by the roll as not_an_object. The table's schema is checked at the roll, and rows
that do not fit are listed by 'tablemere sink rejects <sink>'.

Without --send-key-file the ingest URL is the API's (--api-url, $TABLEMERE_API_URL, .stack/env).

Examples:
  tablemere sink send events_in batch.json --send-key-file ~/events-sink.json
  producer | TABLEMERE_SEND_KEY=tm_send_... tablemere sink send - --batch-id 2026-09-21T12`,
    )
    .action(async (first: string | undefined, second: string | undefined, options: Options, command: Command) => {
      const [ref, input] = second === undefined ? [undefined, first] : [first, second];
      if (input === undefined) throw usageError("give the input: a JSON array or NDJSON file, or - for standard input");
      const given = options.batchId === undefined ? undefined : checkBatchId(options.batchId);
      const target = { ...(await sendTarget(ref, options, command, context)), compress: options.compress };
      const source = openInput(input, context);

      // A file is read twice: once to check every row and size the batches, so a bad row
      // stops the send before anything is stored, then to send.
      let totalBytes = 0;
      let totalBatches: number | undefined;
      if (source.rereadable) {
        const checking = progressBar(context.terminal, 'checking', source.size, SEND_BODY_LIMIT);
        totalBatches = 0;
        try {
          for await (const batch of batches(source, given, (read) => checking.update(read))) {
            totalBatches += 1;
            totalBytes += batch.body.length;
          }
        } finally {
          checking.stop();
        }
      }
      if (totalBatches === 0) {
        context.out.note(`nothing to send: ${source.name} holds no rows`);
        return;
      }

      const progress = progressBar(context.terminal, 'sending', totalBytes, SEND_BODY_LIMIT);
      const sent: Sent[] = [];
      let doneBytes = 0;
      let current: Batch | undefined;
      try {
        for await (const batch of batches(source, given)) {
          current = batch;
          const of = totalBatches === undefined ? '' : ` of ${totalBatches}`;
          const outcome = await sendBatch(target, batch, {
            onBytes: (_b, bytes) => progress.update(doneBytes + bytes, `batch ${batch.part}${of}`),
            onRetry: (notice) => {
              const line = `batch ${batch.part}${of}: ${notice.reason}; retrying in ${notice.waitSeconds} s (attempt ${notice.attempt + 1}${notice.attempt < notice.attempts ? ` of ${notice.attempts}` : ''})`;
              progress.update(doneBytes, line);
              if (!progress.visible) context.out.note(line);
            },
          });
          // Only the figures are kept: the body goes as soon as the batch is stored.
          sent.push({ part: batch.part, id: batch.id, bytes: batch.body.length, rows: batch.rows, firstRow: batch.firstRow, ...outcome });
          doneBytes += batch.body.length;
          current = undefined;
        }
      } catch (error) {
        progress.stop();
        if (!options.json) context.out.lines(sent.map(batchLine));
        throw current === undefined ? error : stoppedAt(error, current, sent, totalBatches);
      }
      progress.stop();
      if (sent.length === 0) {
        context.out.note(`nothing to send: ${source.name} holds no rows`);
        return;
      }
      report(sent, target, source.name, options, context);
    });
}

interface Input {
  readonly name: string;
  /** A regular file can be read twice; standard input and pipes cannot. */
  readonly rereadable: boolean;
  /** Bytes, when known (a regular file). */
  readonly size: number;
  open(): AsyncIterable<Uint8Array>;
}

function openInput(input: string, context: CommandContext): Input {
  if (input === '-') return { name: 'stdin', rereadable: false, size: 0, open: () => context.stdin() };
  let stat: Stats;
  try {
    stat = statSync(input);
  } catch (error) {
    throw usageError(`cannot read ${input} (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
  if (stat.isDirectory()) throw usageError(`${input} is a directory; give a JSON array or NDJSON file`);
  return { name: input, rereadable: stat.isFile(), size: stat.size, open: () => createReadStream(input, { highWaterMark: 1024 * 1024 }) };
}

function batches(source: Input, given: string | undefined, onRead?: (bytes: number) => void): AsyncGenerator<Batch> {
  const input = onRead === undefined ? source.open() : counted(source.open(), onRead);
  const rows = scanRows(input, { maxRowBytes: maxRowBytes(SEND_BODY_LIMIT), source: source.name });
  return packBatches(rows, { maxBatchBytes: SEND_BODY_LIMIT, ...(given === undefined ? {} : { batchId: given }) });
}

/**
 * The send key, its sink and the ingest URL: from the key file, else from --send-key or
 * $TABLEMERE_SEND_KEY with the API's URL. A `<sink>` given too must be the key's sink.
 */
export async function sendTarget(ref: string | undefined, options: Options, command: Command, context: CommandContext): Promise<SendTarget> {
  if (options.sendKeyFile !== undefined && options.sendKey !== undefined) throw usageError('--send-key-file and --send-key: choose one');
  if (ref !== undefined) sinkSegment(ref);

  if (options.sendKeyFile !== undefined) {
    const file = readKeyFile(options.sendKeyFile);
    if (ref !== undefined && ref !== file.sink_id && ref !== file.sink_name) {
      throw usageError(`sink '${ref}' does not match ${options.sendKeyFile}, which holds the key of sink ${file.sink_name} (${file.sink_id})`);
    }
    return { ingestUrl: file.ingest_url, sendKey: file.send_key };
  }

  const key = options.sendKey ?? context.env.TABLEMERE_SEND_KEY?.trim();
  if (!key) throw usageError('no send key: pass --send-key-file FILE (written by sink create --save), or --send-key KEY, or set TABLEMERE_SEND_KEY');
  const where = options.sendKey === undefined ? 'TABLEMERE_SEND_KEY' : '--send-key';
  if (!SendKey.safeParse(key).success) throw usageError(`${where}: not a send key (${SEND_KEY_FORMAT})`);
  const sinkId = sinkIdOfSendKey(key)!;
  const ingestUrl = `${context.apiUrl(command)}/v1/sinks/${sinkId}`;
  if (ref !== undefined && ref !== sinkId) {
    // A name can only be checked by asking the API (with the API key) which sink it is.
    const named = SINK_ID_PATTERN.test(ref) ? ref : (await context.api(command).get(`/v1/sinks/${sinkSegment(ref)}`, Sink)).value.id;
    if (named !== sinkId) throw usageError(`sink '${ref}' is ${named}, but the send key in ${where} belongs to sink ${sinkId}`);
  }
  return { ingestUrl, sendKey: key };
}

/** A stored batch as the report needs it. */
interface Sent extends SendOutcome, Pick<Batch, 'part' | 'id' | 'rows' | 'firstRow'> {
  /** The request body's size. */
  readonly bytes: number;
}

function batchLine({ id, bytes, result, replay }: Sent): string {
  const refused = result.rejected > 0 ? `, ${count(result.rejected)} refused` : '';
  const stored = replay ? 'already stored (replayed: nothing stored twice)' : 'stored';
  return `batch ${id}  ${size(bytes)}  ${count(result.accepted)} accepted${refused}  ${stored}`;
}

/** How `--batch-id ID` named the batches of a send that took more than one. */
function namingLine(id: string, batches: number): string {
  const rest = batches > 2 ? `${id}-2 to ${id}-${batches}` : `${id}-2`;
  return `--batch-id ${id}: ${batches} batches, named ${id} (the first) and ${rest}, in input order`;
}

function report(sent: readonly Sent[], target: SendTarget, name: string, options: Options, context: CommandContext): void {
  const accepted = sent.reduce((sum, s) => sum + s.result.accepted, 0);
  const refused = sent.reduce((sum, s) => sum + s.result.rejected, 0);
  const sinkId = sinkIdOfTarget(target);
  if (options.json) {
    context.out.json({
      sink_id: sinkId,
      batches: sent.map(({ part, bytes, rows, replay, result }) => ({ part, body_bytes: bytes, rows, replay, ...result })),
      accepted,
      rejected: refused,
    });
  } else {
    const bytes = sent.reduce((sum, s) => sum + s.bytes, 0);
    const replays = sent.filter((s) => s.replay).length;
    const named = options.batchId !== undefined && sent.length > 1 ? [namingLine(options.batchId, sent.length)] : [];
    context.out.lines([
      ...sent.map(batchLine),
      ...named,
      `sent ${name} to sink ${sinkId}: ${plural(sent.length, 'batch', 'batches')}, ${size(bytes)}; ` +
        `${count(accepted)} rows accepted, ${count(refused)} refused${replays > 0 ? ` (${plural(replays, 'batch', 'batches')} already stored before)` : ''}`,
    ]);
  }
  if (refused === 0) return;

  const reasons = sent.flatMap(({ id, firstRow, result }) => result.reasons.map((r) => `row ${count(firstRow + r.index)} (batch ${id}, element ${r.index}): ${r.reason}`));
  for (const line of reasons.slice(0, REASONS_SHOWN)) context.out.note(line);
  if (refused > REASONS_SHOWN) context.out.note(`... and ${count(refused - REASONS_SHOWN)} more`);
  throw new CliError('rows_refused', `${plural(refused, 'row is', 'rows are')} not a JSON object: stored, and the roll rejects ${refused === 1 ? 'it' : 'them'} as not_an_object (see: tablemere sink rejects)`);
}

/** A failure in the middle of a send, with what happened before it and how to go on. */
function stoppedAt(error: unknown, batch: Batch, sent: readonly Sent[], total: number | undefined): unknown {
  if (!(error instanceof CliError)) return error;
  const of = total === undefined ? '' : ` of ${total}`;
  const before = sent.length === 0 ? 'nothing was stored' : `${plural(sent.length, 'batch was', 'batches were')} stored before it`;
  return new CliError(
    error.kind,
    `batch ${batch.part}${of} (${batch.id}, from row ${count(batch.firstRow)}): ${error.message}; ${before}; ` +
      `run the same command again to send the rest (stored batches are not stored twice)`,
  );
}
