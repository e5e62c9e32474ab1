import { IcebergError } from '../errors.ts';
import type { PartitionField, PartitionSpec } from '../spec/metadata.ts';
import type { Schema } from '../spec/schema.ts';
import { describeType, type IcebergType, type NestedField } from '../spec/types.ts';
import { parseTransform, resultType, type Transform, transformString } from './transforms.ts';

/** A partition field as a person writes it: `transform(source)`, e.g. `day(at)`, `bucket[16](device)`, `identity(meta.kind)`. */
export interface PartitionFieldRequest {
  transform: Transform;
  /** The source column's name; a nested one as its dotted path (`meta.kind`). */
  source: string;
}

/** Why a partition request does not fit a schema; `field` is the request as written. */
export type PartitionProblem = 'syntax' | 'unknown_field' | 'transform_invalid' | 'duplicate';

export class PartitionRequestError extends IcebergError {
  constructor(
    readonly problem: PartitionProblem,
    readonly field: string,
    message: string,
  ) {
    super('bad_request', message);
  }
}

const FIELD = /^\s*([a-z]+(?:\[\s*\d+\s*\])?)\s*\(\s*([^()\s]+)\s*\)\s*$/;

export function parsePartitionField(text: string): PartitionFieldRequest {
  const match = FIELD.exec(text);
  if (!match) {
    throw new PartitionRequestError('syntax', text, `partition field "${text}" is not transform(column), e.g. day(__ingest_ts), bucket[16](device), identity(zone)`);
  }
  try {
    return { transform: parseTransform(match[1]!.replace(/\s+/g, '')), source: match[2]! };
  } catch (error) {
    throw new PartitionRequestError('syntax', text, `partition field "${text}": ${(error as Error).message}; use identity, bucket[N], truncate[W], year, month, day or hour`);
  }
}

/** The canonical text of a request: `bucket[16](device)`. */
export function partitionFieldText(request: PartitionFieldRequest): string {
  return `${transformString(request.transform)}(${request.source})`;
}

/**
 * The field's name as Java's and PyIceberg's spec updates name it (`device_bucket_16`, `at_day`,
 * `zone`), but with a nested source's dots as `_` (`meta_kind`): the name is also the data
 * directory's (`meta_kind=a/`), and a SeaweedFS table bucket refuses a dot there.
 */
export function partitionFieldName(request: PartitionFieldRequest): string {
  const t = request.transform;
  const source = request.source.replaceAll('.', '_');
  if (t.kind === 'identity') return source;
  if (t.kind === 'bucket') return `${source}_bucket_${t.n}`;
  if (t.kind === 'truncate') return `${source}_trunc_${t.width}`;
  if (t.kind === 'void') return `${source}_null`;
  return `${source}_${t.kind}`;
}

/** The field a dotted path names, walking structs only (a list's or map's insides cannot be partition sources). */
function findByPath(fields: readonly NestedField[], path: string): NestedField | undefined {
  const [head, ...rest] = path.split('.');
  const field = fields.find((f) => f.name === head);
  if (field === undefined || rest.length === 0) return field;
  return field.type.kind === 'struct' ? findByPath(field.type.fields, rest.join('.')) : undefined;
}

/**
 * The spec fields of `requests` on `schema`, ids from `lastPartitionId + 1`. Throws a
 * PartitionRequestError naming the first field whose source is not a column of the schema
 * (top-level or inside structs), whose transform does not apply to the source's type, or that
 * repeats another (same source and transform, or same name).
 */
export function resolvePartitionFields(requests: readonly PartitionFieldRequest[], schema: Schema, lastPartitionId: number): PartitionField[] {
  const seen = new Set<string>();
  return requests.map((request, i) => {
    const text = partitionFieldText(request);
    const source = findByPath(schema.fields, request.source);
    if (source === undefined) {
      throw new PartitionRequestError('unknown_field', text, `partition field ${text}: the table has no column ${request.source} (nested columns as a.b, inside structs only)`);
    }
    checkTransform(request, text, source.type);
    const name = partitionFieldName(request);
    for (const key of [`source ${source.id} ${transformString(request.transform)}`, `name ${name}`]) {
      if (seen.has(key)) throw new PartitionRequestError('duplicate', text, `partition field ${text} repeats another field of the same spec`);
      seen.add(key);
    }
    return { 'source-id': source.id, 'field-id': lastPartitionId + 1 + i, name, transform: transformString(request.transform) };
  });
}

function checkTransform(request: PartitionFieldRequest, text: string, type: IcebergType): void {
  try {
    resultType(request.transform, type);
  } catch {
    throw new PartitionRequestError('transform_invalid', text, `partition field ${text}: ${transformString(request.transform)} does not apply to ${request.source}, a ${describeType(type)} column`);
  }
}

/** True when `spec` partitions by exactly `fields` (same sources and transforms, in order); names and ids aside. */
export function sameFields(spec: Pick<PartitionSpec, 'fields'>, fields: readonly Pick<PartitionField, 'source-id' | 'transform'>[]): boolean {
  return spec.fields.length === fields.length && spec.fields.every((f, i) => f['source-id'] === fields[i]!['source-id'] && f.transform === fields[i]!.transform);
}
