import { footerTrailer, ParquetFooterError, splitFooter } from './parquet-footer.ts';
import { decodeStruct, encodeStruct, field, type ThriftList, type ThriftStruct, ThriftType } from './thrift-compact.ts';

/**
 * Parquet files written with one schema joined into one file, without decoding any page: the
 * column chunks of every file are copied after each other and the footers merged (row groups
 * in order, every offset moved with its bytes). Lets row groups be written in parallel and
 * still land as one data file.
 *
 * Layout: `PAR1`, each file's column chunks, then each file's bloom filters and page indexes
 * (offset indexes rewritten: they hold page offsets), the merged footer, its length, `PAR1`.
 */


// Field ids of parquet.thrift.
const FILE_SCHEMA = 2;
const FILE_NUM_ROWS = 3;
const FILE_ROW_GROUPS = 4;
const FILE_ENCRYPTION = 8;
const GROUP_COLUMNS = 1;
const GROUP_FILE_OFFSET = 5;
const GROUP_ORDINAL = 7;
const CHUNK_FILE_PATH = 1;
const CHUNK_FILE_OFFSET = 2;
const CHUNK_META = 3;
const CHUNK_OFFSET_INDEX = 4;
const CHUNK_OFFSET_INDEX_LENGTH = 5;
const CHUNK_COLUMN_INDEX = 6;
const CHUNK_COLUMN_INDEX_LENGTH = 7;
const META_DATA_PAGE = 9;
const META_INDEX_PAGE = 10;
const META_DICTIONARY_PAGE = 11;
const META_BLOOM_FILTER = 14;
const META_BLOOM_FILTER_LENGTH = 15;
const OFFSET_INDEX_PAGES = 1;
const PAGE_OFFSET = 1;

export class ParquetConcatError extends ParquetFooterError {
  override readonly name = 'ParquetConcatError';
}

interface Part {
  bytes: Uint8Array;
  footer: ThriftStruct;
  /** Where the column chunks end (and bloom filters, page indexes or the footer start). */
  dataEnd: number;
}

function i64(struct: ThriftStruct, id: number): bigint | undefined {
  const f = field(struct, id);
  return f === undefined ? undefined : (f.value as bigint);
}

function setI64(struct: ThriftStruct, id: number, value: bigint): void {
  const f = field(struct, id);
  if (f !== undefined) f.value = value;
  else insertField(struct, { id, type: ThriftType.I64, value });
}

function i32(struct: ThriftStruct, id: number): number | undefined {
  const f = field(struct, id);
  return f === undefined ? undefined : (f.value as number);
}

function setI32(struct: ThriftStruct, id: number, type: number, value: number): void {
  const f = field(struct, id);
  if (f !== undefined) f.value = value;
  else insertField(struct, { id, type, value });
}

/** Fields stay in id order, as the compact protocol's deltas expect of a tidy writer. */
function insertField(struct: ThriftStruct, f: ThriftStruct['fields'][number]): void {
  const at = struct.fields.findIndex((other) => other.id > f.id);
  if (at < 0) struct.fields.push(f);
  else struct.fields.splice(at, 0, f);
}

function list(struct: ThriftStruct, id: number): ThriftList {
  const f = field(struct, id);
  if (f === undefined || (f.value as ThriftList).kind !== 'list') throw new ParquetConcatError(`footer field ${id} is not a list`);
  return f.value as ThriftList;
}

function structs(items: ThriftList): ThriftStruct[] {
  return items.items as ThriftStruct[];
}

function chunksOf(footer: ThriftStruct): ThriftStruct[] {
  return structs(list(footer, FILE_ROW_GROUPS)).flatMap((group) => structs(list(group, GROUP_COLUMNS)));
}

function readPart(bytes: Uint8Array, index: number): Part {
  const { footer, footerStart } = splitFooter(bytes, `part ${index}`);
  if (field(footer, FILE_ENCRYPTION) !== undefined) throw new ParquetConcatError(`part ${index} is encrypted`);
  let dataEnd = footerStart;
  for (const chunk of chunksOf(footer)) {
    if (field(chunk, CHUNK_FILE_PATH) !== undefined) throw new ParquetConcatError(`part ${index} keeps column data in another file`);
    const meta = field(chunk, CHUNK_META)?.value as ThriftStruct | undefined;
    for (const start of [i64(chunk, CHUNK_OFFSET_INDEX), i64(chunk, CHUNK_COLUMN_INDEX), meta && i64(meta, META_BLOOM_FILTER)]) {
      if (start !== undefined && Number(start) < dataEnd) dataEnd = Number(start);
    }
  }
  return { bytes, footer, dataEnd };
}

/** Joins Parquet files of the same schema into one, row groups in the order given. */
export function concatParquet(files: readonly Uint8Array[]): Uint8Array {
  if (files.length === 0) throw new ParquetConcatError('nothing to concatenate');
  if (files.length === 1) return files[0] as Uint8Array;
  const parts = files.map(readPart);
  const first = parts[0] as Part;
  const schemaOf = (part: Part) => Buffer.from(encodeStruct({ kind: 'struct', fields: [{ id: FILE_SCHEMA, type: ThriftType.List, value: list(part.footer, FILE_SCHEMA) }] }));
  const schema = schemaOf(first);
  parts.forEach((part, i) => {
    if (!schemaOf(part).equals(schema)) throw new ParquetConcatError(`part ${i} has another schema`);
  });

  // Column chunks first: part i's bytes [4, dataEnd) move by shift[i].
  const pieces: Uint8Array[] = [Uint8Array.of(0x50, 0x41, 0x52, 0x31)];
  let at = 4;
  const shifts = parts.map((part) => {
    const shift = BigInt(at - 4);
    pieces.push(part.bytes.subarray(4, part.dataEnd));
    at += part.dataEnd - 4;
    return shift;
  });

  // Then bloom filters and page indexes, each moved to where it lands; offset indexes rewritten.
  const groups: ThriftStruct[] = [];
  let rows = 0n;
  parts.forEach((part, p) => {
    const shift = shifts[p] as bigint;
    /** Appends bytes after what is placed so far; returns their offset in the joined file. */
    const place = (bytes: Uint8Array): bigint => {
      pieces.push(bytes);
      const offset = BigInt(at);
      at += bytes.length;
      return offset;
    };
    const range = (start: bigint, length: number) => part.bytes.subarray(Number(start), Number(start) + length);
    for (const group of structs(list(part.footer, FILE_ROW_GROUPS))) {
      for (const chunk of structs(list(group, GROUP_COLUMNS))) {
        const fileOffset = i64(chunk, CHUNK_FILE_OFFSET);
        // 0 is what current writers put in this deprecated field: leave it.
        if (fileOffset !== undefined && fileOffset > 0n) setI64(chunk, CHUNK_FILE_OFFSET, fileOffset + shift);
        const meta = field(chunk, CHUNK_META)?.value as ThriftStruct | undefined;
        if (meta !== undefined) {
          for (const id of [META_DATA_PAGE, META_INDEX_PAGE, META_DICTIONARY_PAGE]) {
            const offset = i64(meta, id);
            if (offset !== undefined) setI64(meta, id, offset + shift);
          }
          const bloom = i64(meta, META_BLOOM_FILTER);
          const bloomLength = i32(meta, META_BLOOM_FILTER_LENGTH);
          if (bloom !== undefined) {
            if (bloomLength === undefined) throw new ParquetConcatError(`part ${p} has a bloom filter of unknown length`);
            setI64(meta, META_BLOOM_FILTER, place(range(bloom, bloomLength)));
          }
        }
        const columnIndex = i64(chunk, CHUNK_COLUMN_INDEX);
        const columnIndexLength = i32(chunk, CHUNK_COLUMN_INDEX_LENGTH);
        if (columnIndex !== undefined && columnIndexLength !== undefined) setI64(chunk, CHUNK_COLUMN_INDEX, place(range(columnIndex, columnIndexLength)));
        const offsetIndex = i64(chunk, CHUNK_OFFSET_INDEX);
        const offsetIndexLength = i32(chunk, CHUNK_OFFSET_INDEX_LENGTH);
        if (offsetIndex !== undefined && offsetIndexLength !== undefined) {
          const index = decodeStruct(range(offsetIndex, offsetIndexLength)).value;
          for (const page of structs(list(index, OFFSET_INDEX_PAGES))) setI64(page, PAGE_OFFSET, (i64(page, PAGE_OFFSET) ?? 0n) + shift);
          const encoded = encodeStruct(index);
          setI64(chunk, CHUNK_OFFSET_INDEX, place(encoded));
          setI32(chunk, CHUNK_OFFSET_INDEX_LENGTH, ThriftType.I32, encoded.length);
        }
      }
      const groupOffset = i64(group, GROUP_FILE_OFFSET);
      if (groupOffset !== undefined) setI64(group, GROUP_FILE_OFFSET, groupOffset + shift);
      setI32(group, GROUP_ORDINAL, ThriftType.I16, groups.length);
      groups.push(group);
    }
    rows += i64(part.footer, FILE_NUM_ROWS) ?? 0n;
  });

  const footer = first.footer;
  setI64(footer, FILE_NUM_ROWS, rows);
  list(footer, FILE_ROW_GROUPS).items = groups;
  const trailer = footerTrailer(footer);
  pieces.push(trailer);
  const joined = new Uint8Array(at + trailer.length);
  let offset = 0;
  for (const piece of pieces) {
    joined.set(piece, offset);
    offset += piece.length;
  }
  return joined;
}
