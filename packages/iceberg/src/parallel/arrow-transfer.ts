import { Data, type DataType } from 'apache-arrow';

/**
 * Arrow data as plain parts for `postMessage`: the buffers travel as they are (transferred,
 * not copied) and the receiver rebuilds the data with its own types, since class instances
 * do not survive structured cloning.
 */
export interface DataParts {
  offset: number;
  length: number;
  nullCount: number;
  /** Indexed like `Data.buffers`: value offsets, values, validity, type ids. */
  buffers: Array<ArrayBufferView | undefined>;
  children: DataParts[];
}

/**
 * The parts of `data`, adding the memory its buffers live in to `transfer`. The buffers must
 * belong to this data alone (not Node's shared Buffer pool): transferring detaches them.
 */
export function dataParts(data: Data, transfer: Set<ArrayBuffer>): DataParts {
  const buffers: Array<ArrayBufferView | undefined> = [data.valueOffsets, data.values, data.nullBitmap, data.typeIds];
  for (const buffer of buffers) {
    if (buffer !== undefined && buffer.buffer instanceof ArrayBuffer && buffer.buffer.byteLength > 0) transfer.add(buffer.buffer);
  }
  return {
    offset: data.offset,
    length: data.length,
    nullCount: data.nullCount,
    buffers,
    children: data.children.map((child) => dataParts(child, transfer)),
  };
}

/** Rebuilds data of `type` from parts made by `dataParts` for the same type. */
export function dataFromParts(type: DataType, parts: DataParts): Data {
  const children = parts.children.map((child, i) => dataFromParts((type.children[i] as { type: DataType }).type, child));
  return new Data(type, parts.offset, parts.length, parts.nullCount, parts.buffers as never, children);
}
