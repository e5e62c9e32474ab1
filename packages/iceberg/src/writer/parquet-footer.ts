import { decodeStruct, encodeStruct, type ThriftStruct } from './thrift-compact.ts';

/** "PAR1", little-endian. */
export const PARQUET_MAGIC = 0x31524150;

export class ParquetFooterError extends Error {
  override readonly name: string = 'ParquetFooterError';
}

/** A Parquet file's footer (FileMetaData, decoded generically) and where it starts. */
export interface SplitFile {
  footer: ThriftStruct;
  footerStart: number;
}

export function splitFooter(bytes: Uint8Array, what = 'the file'): SplitFile {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length < 12 || view.getUint32(0, true) !== PARQUET_MAGIC || view.getUint32(bytes.length - 4, true) !== PARQUET_MAGIC) {
    throw new ParquetFooterError(`${what} is not a Parquet file`);
  }
  const footerLength = view.getUint32(bytes.length - 8, true);
  const footerStart = bytes.length - 8 - footerLength;
  if (footerStart < 4) throw new ParquetFooterError(`${what} has a footer longer than the file`);
  return { footer: decodeStruct(bytes.subarray(footerStart, bytes.length - 8)).value, footerStart };
}

/** The footer encoded with its length and the closing magic, to follow a file's last data byte. */
export function footerTrailer(footer: ThriftStruct): Uint8Array {
  const encoded = encodeStruct(footer);
  const trailer = new Uint8Array(encoded.length + 8);
  trailer.set(encoded);
  const view = new DataView(trailer.buffer);
  view.setUint32(encoded.length, encoded.length, true);
  view.setUint32(encoded.length + 4, PARQUET_MAGIC, true);
  return trailer;
}
