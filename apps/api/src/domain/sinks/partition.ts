import {
  currentSchema,
  defaultPartitionSpec,
  type PartitionFieldRequest,
  partitionFieldText,
  PartitionRequestError,
  parsePartitionField,
  resolvePartitionFields,
  sameFields,
  schemaFromJson,
  type NestedField,
  type Schema,
  type TableMetadata,
} from '@tablemere/iceberg';
import { apiError } from '../../errors.ts';

/** The column every sink's first roll adds; a partition may use it before it exists. */
const INGEST_TS = '__ingest_ts';

/**
 * Checks a sink's `partition` on its table at create and answers its canonical texts (empty for
 * none). The sources are the table's columns (nested ones as a.b) and `__ingest_ts`, which the
 * first roll adds. A table its owner already partitioned keeps that spec: a `partition` beside
 * it must be the same fields (sources and transforms, in order), else 409 partition_conflict,
 * because the first roll never replaces an owner's spec.
 */
export function sinkPartition(metadata: TableMetadata, requested: readonly string[] | undefined, qualified: string): string[] {
  if (requested === undefined || requested.length === 0) return [];
  const schema = withIngestTs(metadata);
  let fields: ReturnType<typeof resolvePartitionFields>;
  let parsed: PartitionFieldRequest[];
  try {
    parsed = requested.map(parsePartitionField);
    fields = resolvePartitionFields(parsed, schema, 999);
  } catch (error) {
    if (error instanceof PartitionRequestError) throw partitionError(error, schema, qualified);
    throw error;
  }
  const spec = defaultPartitionSpec(metadata);
  if (spec.fields.length > 0 && !sameFields(spec, fields)) {
    const paths = columnPaths(schema.fields);
    const existing = spec.fields.map((f) => `${f.transform}(${paths.get(f['source-id']) ?? `column ${f['source-id']}`})`);
    throw apiError('partition_conflict', {
      message: `Table ${qualified} is already partitioned by ${existing.join(', ')}; leave partition out to keep it, or give the same fields.`,
      details: { table: qualified, table_partition: existing },
    });
  }
  return parsed.map(partitionFieldText);
}

/** The table's schema with `__ingest_ts` as the first roll will add it, when it is not there yet. */
function withIngestTs(metadata: TableMetadata): Schema {
  const schema = schemaFromJson(currentSchema(metadata));
  if (schema.fields.some((f) => f.name === INGEST_TS)) return schema;
  return { ...schema, fields: [...schema.fields, { id: metadata['last-column-id'] + 1, name: INGEST_TS, required: false, type: { kind: 'timestamptz' } }] };
}

/** Every column reachable through structs, by id, as its dotted path. */
function columnPaths(fields: readonly NestedField[], prefix = '', into = new Map<number, string>()): Map<number, string> {
  for (const field of fields) {
    into.set(field.id, `${prefix}${field.name}`);
    if (field.type.kind === 'struct') columnPaths(field.type.fields, `${prefix}${field.name}.`, into);
  }
  return into;
}

function partitionError(error: PartitionRequestError, schema: Schema, qualified: string) {
  switch (error.problem) {
    case 'unknown_field':
      return apiError('partition_field_unknown', {
        message: `${error.message} of table ${qualified}.`,
        details: { field: error.field, columns: [...columnPaths(schema.fields).values()] },
      });
    case 'transform_invalid':
      return apiError('partition_transform_invalid', { message: `${error.message}.`, details: { field: error.field } });
    default:
      return apiError('partition_invalid', { message: `${error.message}.`, details: { field: error.field } });
  }
}
