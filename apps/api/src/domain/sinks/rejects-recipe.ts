import type { SinkRejectsRecipe } from '@tablemere/contracts';
import { rejectsPrefix } from '@tablemere/store';
import type { IntakePlacement } from '../intake/stores.ts';
import type { WarehouseAccess } from '../warehouses.ts';

/** Stands for the sink's id in the recipe: the reader fills it in. */
const SINK_ID = '{sink_id}';

/**
 * Every column of a rejects line, typed, so DuckDB never guesses `row` from a sample of
 * objects and then meets a number (a not_an_object row) or a string (batch_unreadable).
 */
const DUCKDB_COLUMNS =
  "{batch_id: 'VARCHAR', row: 'JSON', row_base64: 'VARCHAR', reason: 'VARCHAR', field: 'VARCHAR', expected: 'VARCHAR', got: 'VARCHAR', message: 'VARCHAR'}";

/**
 * How an engine reads a warehouse's sinks' rejects files straight from the store (the
 * description's "catalog's read recipe"): DuckDB `read_json` over the files, and the same in
 * Python with pyarrow's S3 filesystem. The S3 settings are the warehouse's, as in the other
 * snippets of GET /v1/connection; credentials stay placeholders.
 */
export function rejectsRecipe(warehouse: Pick<WarehouseAccess, 's3'>, placement: IntakePlacement): SinkRejectsRecipe {
  // pyarrow's FileSelector takes the folder without its closing slash.
  const folder = `${placement.bucket}/${rejectsPrefix(SINK_ID).replace(/\/$/, '')}`;
  const location = `s3://${folder}/*.ndjson`;
  const endpoint = new URL(warehouse.s3.endpoint);
  const python = [
    'import json, os',
    'from pyarrow import fs',
    '',
    's3 = fs.S3FileSystem(',
    `    endpoint_override=${JSON.stringify(endpoint.host)}, scheme=${JSON.stringify(endpoint.protocol.replace(':', ''))}, region=${JSON.stringify(warehouse.s3.region)},`,
    '    access_key=os.environ["AWS_ACCESS_KEY_ID"], secret_key=os.environ["AWS_SECRET_ACCESS_KEY"],',
    ')',
    `files = s3.get_file_info(fs.FileSelector(${JSON.stringify(folder)}, allow_not_found=True))`,
    '# One dict per rejected row: batch_id, row (as sent), reason, field, expected, got, message.',
    'rejects = [json.loads(line) for f in sorted(files, key=lambda f: f.path) if f.path.endswith(".ndjson")',
    '           for line in s3.open_input_stream(f.path).read().decode().splitlines() if line]',
  ].join('\n');
  return {
    location,
    credentials: placement.identity,
    duckdb: `SELECT * FROM read_json('${location}', format = 'newline_delimited', columns = ${DUCKDB_COLUMNS});`,
    python,
  };
}
