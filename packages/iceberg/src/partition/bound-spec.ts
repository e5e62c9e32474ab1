import { IcebergError } from '../errors.ts';
import type { PartitionSpec } from '../spec/metadata.ts';
import { indexById, type Schema } from '../spec/schema.ts';
import type { NestedField, PrimitiveType } from '../spec/types.ts';
import { parseTransform, resultType, type Transform } from './transforms.ts';

/** A partition field with its source column and the types on both sides of its transform. */
export interface BoundPartitionField {
  fieldId: number;
  name: string;
  /** The field name as written in Avro (Java's AvroSchemaUtil.makeCompatibleName). */
  avroName: string;
  sourceId: number;
  /** Field ids from the top of the schema down to the source column (structs only). */
  sourcePath: readonly number[];
  source: PrimitiveType;
  transform: Transform;
  result: PrimitiveType;
}

export interface BoundPartitionSpec {
  specId: number;
  fields: readonly BoundPartitionField[];
}

/** Avro names are `[A-Za-z_][A-Za-z0-9_]*`; Java escapes any other character as `_x<HEX>`. */
export function avroCompatibleName(name: string): string {
  const valid = (c: string, first: boolean) => /[A-Za-z_]/.test(c) || (!first && /[0-9]/.test(c));
  let out = '';
  [...name].forEach((c, i) => {
    if (valid(c, i === 0)) out += c;
    else if (i === 0 && /[0-9]/.test(c)) out += `_${c}`;
    else out += `_x${(c.codePointAt(0) as number).toString(16).toUpperCase()}`;
  });
  return out;
}

/** The struct path (by field id) to every field reachable without crossing a list or map. */
function structPaths(schema: Schema): Map<number, number[]> {
  const paths = new Map<number, number[]>();
  const visit = (fields: readonly NestedField[], prefix: number[]) => {
    for (const f of fields) {
      const path = [...prefix, f.id];
      paths.set(f.id, path);
      if (f.type.kind === 'struct') visit(f.type.fields, path);
    }
  };
  visit(schema.fields, []);
  return paths;
}

/** Binds a spec to the schema its source ids refer to; throws `unsupported` for what cannot be written. */
export function bindPartitionSpec(spec: Pick<PartitionSpec, 'spec-id' | 'fields'>, schema: Schema): BoundPartitionSpec {
  const byId = indexById(schema);
  const paths = structPaths(schema);
  const fields = spec.fields.map((f): BoundPartitionField => {
    const sourceField = byId.get(f['source-id']);
    const sourcePath = paths.get(f['source-id']);
    const transform = parseTransform(f.transform);
    if (sourceField === undefined || sourcePath === undefined) {
      // A dropped source column partitions nothing any more; only void may stay on it.
      if (transform.kind !== 'void') throw new IcebergError('unsupported', `partition field ${f.name} refers to column ${f['source-id']}, which is not in the schema or is inside a list or map`);
    }
    const source = (sourceField?.type ?? { kind: 'int' }) as PrimitiveType;
    return {
      fieldId: f['field-id'],
      name: f.name,
      avroName: avroCompatibleName(f.name),
      sourceId: f['source-id'],
      sourcePath: sourcePath ?? [],
      source,
      transform,
      result: resultType(transform, source),
    };
  });
  return { specId: spec['spec-id'], fields };
}
