import { type Data, type DataType, makeData, Type } from 'apache-arrow';

/**
 * The rows at `indices` (ascending or not) of an Arrow column as a new column, copying buffers
 * exactly: Arrow JS has no take kernel, and reading values through `get()` loses precision
 * (timestamps come back as milliseconds). Covers the types this library writes: fixed-width
 * primitives, booleans, variable-length bytes, structs, lists and maps.
 */
export function takeRows(data: Data, indices: Int32Array): Data {
  const length = indices.length;
  const { validity, nullCount } = takeValidity(data, indices);
  const base = { type: data.type as DataType, length, nullCount, nullBitmap: validity };
  const at = (i: number) => data.offset + (indices[i] as number);
  switch (data.typeId) {
    case Type.Bool: {
      const bits = new Uint8Array((length + 7) >> 3);
      const source = data.values as Uint8Array;
      for (let i = 0; i < length; i++) if ((source[at(i) >> 3]! >> (at(i) & 7)) & 1) bits[i >> 3]! |= 1 << (i & 7);
      return makeData({ ...base, data: bits } as never);
    }
    case Type.Utf8:
    case Type.Binary: {
      const offsets = data.valueOffsets as Int32Array;
      const source = data.values as Uint8Array;
      const outOffsets = new Int32Array(length + 1);
      for (let i = 0; i < length; i++) outOffsets[i + 1] = outOffsets[i]! + (offsets[at(i) + 1]! - offsets[at(i)]!);
      const bytes = new Uint8Array(outOffsets[length]!);
      for (let i = 0; i < length; i++) bytes.set(source.subarray(offsets[at(i)]!, offsets[at(i) + 1]!), outOffsets[i]!);
      return makeData({ ...base, valueOffsets: outOffsets, data: bytes } as never);
    }
    // Arrow JS slices a struct's children with it, so their own offsets already apply.
    case Type.Struct:
      return makeData({ ...base, children: data.children.map((child) => takeRows(child, indices)) } as never);
    case Type.List:
    case Type.Map: {
      const offsets = data.valueOffsets as Int32Array;
      const outOffsets = new Int32Array(length + 1);
      for (let i = 0; i < length; i++) outOffsets[i + 1] = outOffsets[i]! + (offsets[at(i) + 1]! - offsets[at(i)]!);
      const childIndices = new Int32Array(outOffsets[length]!);
      for (let i = 0, k = 0; i < length; i++) for (let j = offsets[at(i)]!; j < offsets[at(i) + 1]!; j++) childIndices[k++] = j;
      return makeData({ ...base, valueOffsets: outOffsets, child: takeRows(data.children[0]!, childIndices) } as never);
    }
    default: {
      // Fixed width: `stride` array elements per row (4 words for decimal128, n bytes for fixed[n]).
      const source = data.values as Int32Array | BigInt64Array | Float32Array | Float64Array | Uint32Array | Uint8Array;
      const stride =
        data.typeId === Type.FixedSizeBinary
          ? (data.type as unknown as { byteWidth: number }).byteWidth
          : data.typeId === Type.Decimal
            ? (data.type as unknown as { bitWidth: number }).bitWidth / 32
            : 1;
      const out = new (source.constructor as new (n: number) => typeof source)(length * stride);
      for (let i = 0; i < length; i++) out.set(source.subarray(at(i) * stride, (at(i) + 1) * stride) as never, i * stride);
      return makeData({ ...base, data: out } as never);
    }
  }
}

function takeValidity(data: Data, indices: Int32Array): { validity: Uint8Array | undefined; nullCount: number } {
  const bitmap = data.nullCount === 0 ? null : (data.nullBitmap as Uint8Array | undefined) ?? null;
  if (bitmap === null) return { validity: undefined, nullCount: 0 };
  const validity = new Uint8Array((indices.length + 7) >> 3);
  let nulls = 0;
  for (let i = 0; i < indices.length; i++) {
    const at = data.offset + (indices[i] as number);
    if ((bitmap[at >> 3]! >> (at & 7)) & 1) validity[i >> 3]! |= 1 << (i & 7);
    else nulls++;
  }
  return { validity: nulls === 0 ? undefined : validity, nullCount: nulls };
}
