import { REJECTS_PAGE_MAX, type RejectedRow, RejectsPage } from '@tablemere/contracts';
import type { Command } from 'commander';
import { exactJson } from '../api-client.ts';
import { type CommandContext, sinkSegment } from '../context.ts';
import { sinceInstant } from '../durations.ts';
import { ago, count } from '../human.ts';
import { integerOption } from '../options.ts';

interface Options {
  since?: string;
  rows?: boolean;
  limit?: number;
  json?: boolean;
}

export function addSinkRejects(sink: Command, context: CommandContext): void {
  sink
    .command('rejects')
    .description("print the rows a sink's rolls rejected, with the reason, so they can be fixed and sent again")
    .argument('<sink>', 'the sink name or id')
    .option('--since <duration|time>', 'only rejects written this long ago or later: 30m, 2h, 7d, 1h30m, or 2026-09-21T12:00:00Z')
    .option('--rows', 'print only the rejected rows, one per line, exactly as they were sent (input for sink send)')
    .option('--limit <n>', 'print at most this many (default: all)', integerOption('--limit'))
    .option('--json', 'print each reject as one JSON object per line')
    .addHelpText(
      'after',
      `
Rejects are kept 7 days after the roll that wrote them, one file per batch, in batch id order.
To fix rows and send them again:
  tablemere sink rejects events_in --rows > fix.ndjson    # edit fix.ndjson
  tablemere sink send events_in fix.ndjson --send-key-file ~/events-sink.json`,
    )
    .action(async (ref: string, options: Options, command: Command) => {
      const path = `/v1/sinks/${sinkSegment(ref)}/rejects`;
      const since = options.since === undefined ? undefined : sinceInstant(options.since, context.now());
      const api = context.api(command);
      const now = context.now();
      let left = options.limit ?? Number.POSITIVE_INFINITY;
      let cursor: string | undefined;
      let printed = 0;
      let unprintable = 0;
      // Page by page, printing as it goes: memory holds one page whatever the total.
      while (left > 0) {
        const limit = String(Math.min(left, REJECTS_PAGE_MAX));
        const page = (await api.getExact(path, RejectsPage, { since, limit, cursor })).value;
        for (const reject of page.rejects.slice(0, left)) {
          const text = options.json ? exactJson(reject) : options.rows ? rowText(reject) : describe(reject, now);
          if (text === undefined) unprintable += 1;
          else context.out.lines([text]);
          printed += 1;
        }
        left -= page.rejects.length;
        if (page.next_cursor === null) break;
        cursor = page.next_cursor;
      }
      if (printed === 0) context.out.note(`no rejects${options.since ? ` since ${options.since}` : ''}`);
      if (unprintable > 0) {
        context.out.note(`${count(unprintable)} rejected batches were not text (batch_unreadable with row_base64); see them without --rows`);
      }
    });
}

/** The row as it was sent; a batch_unreadable line (kept as a string) as its original text. */
function rowText(reject: RejectedRow): string | undefined {
  if (reject.reason === 'batch_unreadable' && typeof reject.row === 'string') return reject.row;
  if (reject.row === null || reject.row === undefined) return undefined;
  return exactJson(reject.row);
}

function describe(reject: RejectedRow, now: Date): string {
  const field = reject.field === '' ? '' : ` ${reject.field}`;
  const row = reject.row === null && typeof reject.row_base64 === 'string' ? `(not text; base64) ${reject.row_base64}` : exactJson(reject.row);
  return `${reject.batch_id}:${reject.line}  ${reject.reason}${field}: ${reject.message}  (rolled ${ago(reject.written_at, now)})\n  ${row}`;
}
