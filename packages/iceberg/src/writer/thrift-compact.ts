/**
 * Thrift's compact protocol, generically: a struct decodes into its fields by id and type, and
 * encodes back to the same bytes. Enough to edit a few fields of a Parquet footer without a
 * schema of the whole thing (unknown fields are carried through untouched).
 */

export const ThriftType = {
  True: 1,
  False: 2,
  Byte: 3,
  I16: 4,
  I32: 5,
  I64: 6,
  Double: 7,
  Binary: 8,
  List: 9,
  Set: 10,
  Map: 11,
  Struct: 12,
} as const;

export type ThriftType = number;

export type ThriftValue = boolean | number | bigint | Uint8Array | ThriftStruct | ThriftList | ThriftMap;

export interface ThriftField {
  id: number;
  /** For booleans, True or False (the value is in the type). */
  type: ThriftType;
  value: ThriftValue;
}

export interface ThriftStruct {
  kind: 'struct';
  fields: ThriftField[];
}

export interface ThriftList {
  kind: 'list';
  elementType: ThriftType;
  items: ThriftValue[];
  /** Encoded as a set (same layout). */
  set: boolean;
}

export interface ThriftMap {
  kind: 'map';
  keyType: ThriftType;
  valueType: ThriftType;
  entries: Array<[ThriftValue, ThriftValue]>;
}

export class ThriftDecodeError extends Error {
  override readonly name = 'ThriftDecodeError';
}

/** Reads one struct from `bytes` at `offset`; returns it and where it ended. */
export function decodeStruct(bytes: Uint8Array, offset = 0): { value: ThriftStruct; end: number } {
  const reader = new Reader(bytes, offset);
  const value = reader.struct();
  return { value, end: reader.at };
}

export function encodeStruct(value: ThriftStruct): Uint8Array {
  const writer = new Writer();
  writer.struct(value);
  return writer.bytes();
}

/** The field `id` of a struct, if present. */
export function field(struct: ThriftStruct, id: number): ThriftField | undefined {
  return struct.fields.find((f) => f.id === id);
}

class Reader {
  constructor(
    private readonly b: Uint8Array,
    public at: number,
  ) {}

  private byte(): number {
    if (this.at >= this.b.length) throw new ThriftDecodeError('thrift data ends early');
    return this.b[this.at++] as number;
  }

  private varint(): bigint {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      const byte = this.byte();
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return result;
      shift += 7n;
      if (shift > 63n) throw new ThriftDecodeError('thrift varint too long');
    }
  }

  private zigzag(): bigint {
    const n = this.varint();
    return (n >> 1n) ^ -(n & 1n);
  }

  struct(): ThriftStruct {
    const fields: ThriftField[] = [];
    let last = 0;
    for (;;) {
      const header = this.byte();
      if (header === 0) return { kind: 'struct', fields };
      const type = header & 0x0f;
      const delta = header >> 4;
      const id = delta === 0 ? Number(this.zigzag()) : last + delta;
      last = id;
      fields.push({ id, type, value: type === ThriftType.True || type === ThriftType.False ? type === ThriftType.True : this.value(type) });
    }
  }

  private value(type: number): ThriftValue {
    switch (type) {
      case ThriftType.True:
      case ThriftType.False:
        // Inside containers a boolean is a byte of its own.
        return this.byte() === ThriftType.True;
      case ThriftType.Byte:
        return (this.byte() << 24) >> 24;
      case ThriftType.I16:
      case ThriftType.I32:
        return Number(this.zigzag());
      case ThriftType.I64:
        return this.zigzag();
      case ThriftType.Double: {
        const view = new DataView(this.b.buffer, this.b.byteOffset + this.at, 8);
        this.at += 8;
        return view.getFloat64(0, true);
      }
      case ThriftType.Binary: {
        const length = Number(this.varint());
        if (this.at + length > this.b.length) throw new ThriftDecodeError('thrift binary runs past the data');
        const value = this.b.subarray(this.at, this.at + length);
        this.at += length;
        return value;
      }
      case ThriftType.List:
      case ThriftType.Set: {
        const header = this.byte();
        const size = header >> 4 === 15 ? Number(this.varint()) : header >> 4;
        const elementType = header & 0x0f;
        const items: ThriftValue[] = [];
        for (let i = 0; i < size; i++) items.push(this.value(elementType));
        return { kind: 'list', elementType, items, set: type === ThriftType.Set };
      }
      case ThriftType.Map: {
        const size = Number(this.varint());
        const types = size > 0 ? this.byte() : 0;
        const keyType = types >> 4;
        const valueType = types & 0x0f;
        const entries: Array<[ThriftValue, ThriftValue]> = [];
        for (let i = 0; i < size; i++) entries.push([this.value(keyType), this.value(valueType)]);
        return { kind: 'map', keyType, valueType, entries };
      }
      case ThriftType.Struct:
        return this.struct();
      default:
        throw new ThriftDecodeError(`unknown thrift type ${type}`);
    }
  }
}

class Writer {
  private buffer = new Uint8Array(1024);
  private at = 0;

  bytes(): Uint8Array {
    return this.buffer.slice(0, this.at);
  }

  private reserve(count: number): void {
    if (this.at + count <= this.buffer.length) return;
    const next = new Uint8Array(Math.max(this.buffer.length * 2, this.at + count));
    next.set(this.buffer.subarray(0, this.at));
    this.buffer = next;
  }

  private byte(value: number): void {
    this.reserve(1);
    this.buffer[this.at++] = value & 0xff;
  }

  private varint(value: bigint): void {
    let n = BigInt.asUintN(64, value);
    while (n >= 0x80n) {
      this.byte(Number(n & 0x7fn) | 0x80);
      n >>= 7n;
    }
    this.byte(Number(n));
  }

  private zigzag(value: bigint): void {
    this.varint((value << 1n) ^ (value >> 63n));
  }

  struct(value: ThriftStruct): void {
    let last = 0;
    for (const f of value.fields) {
      const type = f.type === ThriftType.True || f.type === ThriftType.False ? (f.value === true ? ThriftType.True : ThriftType.False) : f.type;
      const delta = f.id - last;
      if (delta > 0 && delta <= 15) {
        this.byte((delta << 4) | type);
      } else {
        this.byte(type);
        this.zigzag(BigInt(f.id));
      }
      last = f.id;
      if (type !== ThriftType.True && type !== ThriftType.False) this.value(type, f.value);
    }
    this.byte(0);
  }

  private value(type: number, value: ThriftValue): void {
    switch (type) {
      case ThriftType.True:
      case ThriftType.False:
        this.byte(value === true ? ThriftType.True : ThriftType.False);
        return;
      case ThriftType.Byte:
        this.byte(value as number);
        return;
      case ThriftType.I16:
      case ThriftType.I32:
        this.zigzag(BigInt(value as number));
        return;
      case ThriftType.I64:
        this.zigzag(value as bigint);
        return;
      case ThriftType.Double: {
        this.reserve(8);
        new DataView(this.buffer.buffer, this.at, 8).setFloat64(0, value as number, true);
        this.at += 8;
        return;
      }
      case ThriftType.Binary: {
        const bytes = value as Uint8Array;
        this.varint(BigInt(bytes.length));
        this.reserve(bytes.length);
        this.buffer.set(bytes, this.at);
        this.at += bytes.length;
        return;
      }
      case ThriftType.List:
      case ThriftType.Set: {
        const list = value as ThriftList;
        const size = list.items.length;
        if (size < 15) this.byte((size << 4) | list.elementType);
        else {
          this.byte(0xf0 | list.elementType);
          this.varint(BigInt(size));
        }
        for (const item of list.items) this.value(list.elementType, item);
        return;
      }
      case ThriftType.Map: {
        const map = value as ThriftMap;
        this.varint(BigInt(map.entries.length));
        if (map.entries.length > 0) this.byte((map.keyType << 4) | map.valueType);
        for (const [k, v] of map.entries) {
          this.value(map.keyType, k);
          this.value(map.valueType, v);
        }
        return;
      }
      case ThriftType.Struct:
        this.struct(value as ThriftStruct);
        return;
      default:
        throw new ThriftDecodeError(`unknown thrift type ${type}`);
    }
  }
}
