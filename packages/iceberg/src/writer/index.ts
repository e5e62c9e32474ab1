export { type AvroCodec, type AvroFile, type AvroWriteOptions, avroType, readAvroFile, writeAvroFile } from './avro.ts';
export type { DataFile, DataFileMetrics } from './data-file.ts';
export { parseJsonRow } from './json-row.ts';
export {
  ENTRY_STATUS,
  type EntryStatus,
  type ManifestDataFile,
  type ManifestEntry,
  readManifest,
  readManifestEntries,
  type WriteManifestEntriesOptions,
  type WriteManifestOptions,
  writeManifest,
  writeManifestEntries,
} from './manifest.ts';
export { assignFirstRowIds, type FieldSummary, type ManifestFile, readManifestList, type WriteManifestListOptions, writeManifestList } from './manifest-list.ts';
export { MANIFEST_ENTRY_V2_SCHEMA, MANIFEST_FILE_V2_SCHEMA, type ManifestFormatVersion } from './manifest-schemas.ts';
export {
  joinParquetParts,
  type ParquetCompression,
  type ParquetPart,
  type ParquetWriteOptions,
  type WrittenParquet,
  writeParquet,
  writeParquetPart,
} from './parquet.ts';
export { convertNdjson, type NdjsonChunk, type NdjsonConversion } from './ndjson-chunks.ts';
export {
  compileRowConverter,
  type NdjsonChunkError,
  type NdjsonChunkResult,
  type NdjsonReject,
  type RejectReason,
  type RowConverter,
  type RowConverterOptions,
  type RowReject,
} from './row-converter.ts';
export { TYPE_TABLE, type TypeRule } from './type-table.ts';
