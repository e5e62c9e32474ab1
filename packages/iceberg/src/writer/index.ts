export { type AvroCodec, type AvroFile, type AvroWriteOptions, avroType, readAvroFile, writeAvroFile } from './avro.ts';
export type { DataFile, DataFileMetrics } from './data-file.ts';
export { readManifest, type WriteManifestOptions, writeManifest } from './manifest.ts';
export { type FieldSummary, type ManifestFile, readManifestList, type WriteManifestListOptions, writeManifestList } from './manifest-list.ts';
export { MANIFEST_ENTRY_V2_SCHEMA, MANIFEST_FILE_V2_SCHEMA } from './manifest-schemas.ts';
