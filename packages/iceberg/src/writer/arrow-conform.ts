import {
  type Data,
  DataType,
  type Field,
  makeBuilder,
  makeData,
  RecordBatch,
  type Schema as ArrowSchema,
  Struct,
  Precision,
  Type,
  util,
} from 'apache-arrow';
import { PARQUET_FIELD_ID } from './type-table.ts';

/**
 * Turns record batches read from a Parquet file into batches of a target Arrow schema (the
 * one this package writes for a table schema, usually a later one than the file was written
 * with), or says it cannot: the file is read through the target by field id, as Iceberg readers
 * project a file onto the current schema (PyIceberg's `_to_requested_schema`).
 *
 * - A target field the file lacks reads as null: it was added after the file was written. A
 *   required one, or one with an initial default (`defaulted`), cannot be read so.
 * - A file field the target lacks is left out: it was dropped.
 * - Names are the target's: a renamed column is found by its id.
 * - Types are the target's: int widens to long, float to double, a decimal to a larger
 *   precision of the same scale; any other difference cannot be read. A required file field
 *   reads into an optional target field, not the other way round.
 * - Other writers' representations are re-encoded: 64-bit offsets (PyIceberg writes LargeUtf8,
 *   LargeBinary and LargeList), another spelling of the UTC zone, extension metadata.
 */
export interface Conformer {
  readonly schema: ArrowSchema;
  conform(batch: RecordBatch): RecordBatch;
}

type Mapper = (data: Data) => Data;

/**
 * A conformer from `file` to `target`, or null when the file cannot be read through it.
 * `defaulted`: the field ids of the target that have an initial default (read so for files without them).
 */
export function conformerFor(file: ArrowSchema, target: ArrowSchema, defaulted: ReadonlySet<string> = new Set()): Conformer | null {
  const root = structMapper(file.fields, target.fields, new Struct(target.fields), defaulted);
  if (root === null) return null;
  return {
    schema: target,
    conform: (batch) => new RecordBatch(target, root(batch.data) as Data<Struct>),
  };
}

function fieldId(field: Field): string | undefined {
  return field.metadata.get(PARQUET_FIELD_ID);
}

/** Children matched by field id: each target child from the file's child of its id, or null when the file has none. */
function structMapper(fileFields: readonly Field[], targetFields: readonly Field[], type: DataType, defaulted: ReadonlySet<string>): Mapper | null {
  const children: Mapper[] = [];
  for (const target of targetFields) {
    const id = fieldId(target);
    const source = fileFields.findIndex((f) => fieldId(f) === id);
    if (source < 0) {
      // Added after the file was written: a default would have to be read instead of null.
      if (!target.nullable || id === undefined || defaulted.has(id)) return null;
      children.push((data) => nulls(target.type, data.length));
      continue;
    }
    const mapper = fieldMapper(fileFields[source] as Field, target, defaulted);
    if (mapper === null) return null;
    children.push((data) => mapper(data.children[source] as Data));
  }
  return (data) =>
    makeData({
      type: type as Struct,
      offset: data.offset,
      length: data.length,
      nullCount: data.nullCount,
      nullBitmap: data.nullBitmap,
      children: children.map((map) => map(data)),
    });
}

/** A column of `length` nulls (a null struct's children are null too). */
function nulls(type: DataType, length: number): Data {
  const builder = makeBuilder({ type, nullValues: [null, undefined] });
  for (let i = 0; i < length; i++) builder.append(null);
  return builder.finish().flush();
}

function fieldMapper(file: Field, target: Field, defaulted: ReadonlySet<string>): Mapper | null {
  if (fieldId(file) !== fieldId(target) || (file.nullable && !target.nullable)) return null;
  return typeMapper(file.type, target.type, defaulted);
}

function typeMapper(file: DataType, target: DataType, defaulted: ReadonlySet<string>): Mapper | null {
  switch (target.typeId) {
    case Type.Struct:
      return file.typeId === Type.Struct ? structMapper(file.children, target.children, target, defaulted) : null;
    case Type.List:
      return file.typeId === Type.List || file.typeId === Type.LargeList ? listMapper(file, target, defaulted) : null;
    case Type.Map: {
      if (file.typeId !== Type.Map) return null;
      // The entries struct has no field id of its own; its key and value do.
      const entries = structMapper((file.children[0] as Field).type.children, (target.children[0] as Field).type.children, (target.children[0] as Field).type, defaulted);
      return entries === null ? null : offsetsMapper(target, entries);
    }
    case Type.Utf8:
      return file.typeId === Type.Utf8 || file.typeId === Type.LargeUtf8 ? offsetsMapper(target) : null;
    case Type.Binary:
      return file.typeId === Type.Binary || file.typeId === Type.LargeBinary ? offsetsMapper(target) : null;
    case Type.Timestamp:
      return sameTimestamp(file, target) ? (data) => data.clone(target) : null;
    case Type.Decimal:
      // A wider precision of the same scale holds the same unscaled values.
      return DataType.isDecimal(file) && DataType.isDecimal(target) && file.scale === target.scale && file.precision <= target.precision && file.bitWidth === target.bitWidth
        ? (data) => data.clone(target)
        : null;
    default:
      return util.compareTypes(file, target) ? (data) => data.clone(target) : promotion(file, target);
  }
}

/** Iceberg's promotions of fixed-width types: int → long, float → double. */
function promotion(file: DataType, target: DataType): Mapper | null {
  if (DataType.isInt(file) && DataType.isInt(target) && file.isSigned && target.isSigned && file.bitWidth === 32 && target.bitWidth === 64) {
    return widened(target, (v) => BigInt64Array.from(v as Int32Array, BigInt));
  }
  if (DataType.isFloat(file) && DataType.isFloat(target) && file.precision === Precision.SINGLE && target.precision === Precision.DOUBLE) {
    return widened(target, (v) => Float64Array.from(v as Float32Array));
  }
  return null;
}

/** int → long, float → double: every value (null slots too, whatever they hold) converted, validity kept. */
function widened(type: DataType, convert: (values: ArrayLike<number>) => BigInt64Array | Float64Array): Mapper {
  return (data) =>
    makeData({ type, offset: data.offset, length: data.length, nullCount: data.nullCount, nullBitmap: data.nullBitmap, data: convert(data.values) } as never);
}

/** Any zone means a UTC instant (`UTC`, `+00:00`, `Etc/UTC` alike); none means wall-clock time. */
function sameTimestamp(file: DataType, target: DataType): boolean {
  return DataType.isTimestamp(file) && DataType.isTimestamp(target) && file.unit === target.unit && (file.timezone == null) === (target.timezone == null);
}

function listMapper(file: DataType, target: DataType, defaulted: ReadonlySet<string>): Mapper | null {
  const element = fieldMapper(file.children[0] as Field, target.children[0] as Field, defaulted);
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
