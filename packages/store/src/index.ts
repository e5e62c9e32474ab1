export { createS3Client } from './client.ts';
export type { S3ClientOptions } from './client.ts';
export { StoreError, isStoreError, kindOfAnswer, toStoreError } from './errors.ts';
export type { StoreErrorKind, StoreErrorOptions } from './errors.ts';
export { ObjectStore, DELETE_BATCH_LIMIT, md5Hex } from './object-store.ts';
export type { DeleteFailure, DeleteResult, ListOptions, ListPage, ObjectHead, ObjectSummary, PutOptions } from './object-store.ts';
export {
  BATCH_CONTENT_TYPE,
  BATCH_METADATA,
  BATCH_SUFFIX,
  INTAKE_ROOT,
  RECEIVED_STAMP,
  batchIdOfKey,
  batchKey,
  rejectsKey,
  rejectsPrefix,
  rollFileKey,
  rollsPrefix,
  sinkPrefix,
} from './intake-layout.ts';
export {
  SEGMENT_CONTENT_TYPE,
  SEGMENT_FORMAT,
  SEGMENT_METADATA,
  SEGMENT_SUFFIX,
  SegmentFormatError,
  decodeSegment,
  encodeSegment,
  newSegmentId,
  segmentIdOfKey,
  segmentKey,
} from './segment.ts';
export type { DecodedSegment, EncodedSegment, SegmentBatch, SegmentEntry, SegmentHeader } from './segment.ts';
