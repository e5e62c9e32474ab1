import {
  type Data,
  DataType,
  type Field,
  makeData,
  RecordBatch,
  type Schema as ArrowSchema,
  Struct,
  Type,
  util,
} from 'apache-arrow';
import { PARQUET_FIELD_ID } from './type-table.ts';

/**
 * Turns record batches read from a Parquet file into batches of a target Arrow schema (the
 * one this package writes for a table schema), value for value, or says it cannot.
 *
 * A file matches a target when both have the same field ids at every level, each with the same
 * nullability and the same type up to representation: other writers use 64-bit offsets
 * (PyIceberg writes LargeUtf8, LargeBinary and LargeList), another spelling of the UTC zone or
 * extension metadata. Those are re-encoded; everything else must be equal. Field names are
 * taken from the target: Iceberg readers find columns by id.
 */
export interface Conformer {
  readonly schema: ArrowSchema;
  conform(batch: RecordBatch): RecordBatch;
}

type Mapper = (data: Data) => Data;

/** A conformer from `file` to `target`, or null when the file does not hold exactly the target's fields. */
export function conformerFor(file: ArrowSchema, target: ArrowSchema): Conformer | null {
  const root = structMapper(file.fields, target.fields, new Struct(target.fields));
  if (root === null) return null;
  return {
    schema: target,
    conform: (batch) => new RecordBatch(target, root(batch.data) as Data<Struct>),
  };
}

function fieldId(field: Field): string | undefined {
  return field.metadata.get(PARQUET_FIELD_ID);
}

/** Children matched by field id: the same ids on both sides, each child conformable. */
function structMapper(fileFields: readonly Field[], targetFields: readonly Field[], type: DataType): Mapper | null {
  if (fileFields.length !== targetFields.length) return null;
  const sources: number[] = [];
  const children: Mapper[] = [];
  for (const target of targetFields) {
    const id = fieldId(target);
    const source = fileFields.findIndex((f) => fieldId(f) === id);
    const mapper = source < 0 ? null : fieldMapper(fileFields[source] as Field, target);
    if (mapper === null) return null;
    sources.push(source);
    children.push(mapper);
  }
  return (data) =>
    makeData({
      type: type as Struct,
      offset: data.offset,
      length: data.length,
      nullCount: data.nullCount,
      nullBitmap: data.nullBitmap,
      children: children.map((map, i) => map(data.children[sources[i] as number] as Data)),
    });
}

function fieldMapper(file: Field, target: Field): Mapper | null {
  if (fieldId(file) !== fieldId(target) || file.nullable !== target.nullable) return null;
  return typeMapper(file.type, target.type);
}

function typeMapper(file: DataType, target: DataType): Mapper | null {
  switch (target.typeId) {
    case Type.Struct:
      return file.typeId === Type.Struct ? structMapper(file.children, target.children, target) : null;
    case Type.List:
      return file.typeId === Type.List || file.typeId === Type.LargeList ? listMapper(file, target) : null;
    case Type.Map: {
      if (file.typeId !== Type.Map) return null;
      // The entries struct has no field id of its own; its key and value do.
      const entries = structMapper((file.children[0] as Field).type.children, (target.children[0] as Field).type.children, (target.children[0] as Field).type);
      return entries === null ? null : offsetsMapper(target, entries);
    }
    case Type.Utf8:
      return file.typeId === Type.Utf8 || file.typeId === Type.LargeUtf8 ? offsetsMapper(target) : null;
    case Type.Binary:
      return file.typeId === Type.Binary || file.typeId === Type.LargeBinary ? offsetsMapper(target) : null;
    case Type.Timestamp:
      return sameTimestamp(file, target) ? (data) => data.clone(target) : null;
    case Type.Decimal:
      return DataType.isDecimal(file) && DataType.isDecimal(target) && util.compareTypes(file, target) && file.bitWidth === target.bitWidth
        ? (data) => data.clone(target)
        : null;
    default:
      return util.compareTypes(file, target) ? (data) => data.clone(target) : null;
  }
}

/** Any zone means a UTC instant (`UTC`, `+00:00`, `Etc/UTC` alike); none means wall-clock time. */
function sameTimestamp(file: DataType, target: DataType): boolean {
  return DataType.isTimestamp(file) && DataType.isTimestamp(target) && file.unit === target.unit && (file.timezone == null) === (target.timezone == null);
}

function listMapper(file: DataType, target: DataType): Mapper | null {
  const element = fieldMapper(file.children[0] as Field, target.children[0] as Field);
  return element === null ? null : offsetsMapper(target, element);
}

/** Lists, maps, strings and binaries: 32-bit offsets, then the child (nested) or the value bytes. */
function offsetsMapper(type: DataType, child?: Mapper): Mapper {
  return (data) =>
    makeData({
      type,
      offset: data.offset,
      length: data.length,
      nullCount: data.nullCount,
      nullBitmap: data.nullBitmap,
      valueOffsets: int32Offsets(data.valueOffsets),
      ...(child ? { child: child(data.children[0] as Data) } : { data: data.values }),
    } as never);
}

/**
 * 64-bit offsets as the 32-bit ones the target types use. The values they point into stay as
 * they are; more than 2 GiB of them in one batch cannot be addressed and is refused.
 */
function int32Offsets(offsets: Int32Array | BigInt64Array): Int32Array {
  if (offsets instanceof Int32Array) return offsets;
  const last = offsets.length === 0 ? 0n : (offsets[offsets.length - 1] as bigint);
  if (last > 0x7fffffffn) throw new RangeError(`a column batch of ${last} bytes does not fit 32-bit offsets`);
  return Int32Array.from(offsets, Number);
}
