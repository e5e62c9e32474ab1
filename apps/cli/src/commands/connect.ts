import { Connection, type SinkRejectsRecipe } from '@tablemere/contracts';
import type { Command } from 'commander';
import { warehouseSegment, type CommandContext } from '../context.ts';
import { credentialNote, duckdbSnippet, pyicebergSnippet, sparkSnippet } from '../connect-snippets.ts';
import { columns } from '../output.ts';

interface Options {
  json?: boolean;
}

export function addConnect(program: Command, context: CommandContext): void {
  program
    .command('connect')
    .description("show how PyIceberg, DuckDB and Spark reach a warehouse's catalog (no secrets are printed)")
    .argument('[warehouse]', 'the warehouse name; the API picks the default when omitted')
    .option('--json', "print the API's JSON answer")
    .action(async (warehouse: string | undefined, options: Options, command: Command) => {
      // Checked for its shape only; the query string carries the name itself.
      if (warehouse !== undefined) warehouseSegment(warehouse);
      const answer = await context.api(command).get('/v1/connection', Connection, { warehouse });
      if (options.json) context.out.json(answer.body);
      else context.out.lines(describe(answer.value));
    });
}

/** Text cut into lines of at most `width` characters, each after `lead`. */
function wrap(text: string, lead: string, width = 96): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/)) {
    if (line !== '' && lead.length + line.length + 1 + word.length > width) {
      lines.push(lead + line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  if (line !== '') lines.push(lead + line);
  return lines;
}

function describe(connection: Connection): string[] {
  const target = connection.warehouse;
  const prefix = target.prefix === null ? '' : ` (prefix ${target.prefix})`;
  return [
    `warehouse ${target.name}`,
    ...columns(
      [
        ['REST URI', target.rest_uri],
        ['warehouse', `${target.warehouse}${prefix}`],
        ['catalog auth', target.auth.type],
        ['S3 endpoint', target.s3.endpoint],
        ['S3 region', target.s3.region],
        ['S3 addressing', target.s3.path_style ? 'path-style' : 'virtual-hosted'],
        ['tablemere API', connection.api_url],
        ...(connection.ingest_url === undefined ? [] : [['sink ingest URL', connection.ingest_url]]),
      ],
      '  ',
    ),
    '',
    credentialNote(target),
    '',
    '# PyIceberg',
    ...pyicebergSnippet(target),
    '',
    '-- DuckDB',
    ...duckdbSnippet(target),
    '',
    '# Spark',
    ...sparkSnippet(target),
    ...(connection.sinks_note === undefined ? [] : ['', '# Sinks', ...wrap(connection.sinks_note, '# ')]),
    ...(connection.sink_rejects === undefined ? [] : rejectsRecipe(connection.sink_rejects)),
  ];
}

/** The sinks' rejects files read straight from the store, `{sink_id}` to fill in. */
function rejectsRecipe(recipe: SinkRejectsRecipe): string[] {
  const whose =
    recipe.credentials === 'warehouse'
      ? "with the warehouse's S3 credentials"
      : "in the platform's intake bucket: with S3 credentials for that bucket, else `tablemere sink rejects <sink>`";
  return [
    '',
    `# Sink rejects: ${recipe.location}`,
    ...wrap(`Fill in the sink id; read ${whose}.`, '# '),
    '-- DuckDB (the S3 secret above)',
    recipe.duckdb,
    '# Python (pyarrow)',
    ...recipe.python.split('\n'),
  ];
}
