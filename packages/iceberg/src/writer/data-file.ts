/**
 * A data file as a manifest records it. Metrics are keyed by field id; each map is optional
 * and holds only exact values (a missing metric means "unknown", a wrong one drops rows from
 * queries).
 */
export interface DataFileMetrics {
  /** Bytes on disk per column (Parquet compressed chunk sizes). */
  columnSizes?: ReadonlyMap<number, bigint>;
  /** Values per column, nulls and NaNs included. */
  valueCounts?: ReadonlyMap<number, bigint>;
  nullValueCounts?: ReadonlyMap<number, bigint>;
  nanValueCounts?: ReadonlyMap<number, bigint>;
  /** Bounds in Iceberg's single-value binary serialisation. */
  lowerBounds?: ReadonlyMap<number, Uint8Array>;
  upperBounds?: ReadonlyMap<number, Uint8Array>;
  /** Offsets of the row groups, where readers may split the file. */
  splitOffsets?: readonly bigint[];
}

export interface DataFile {
  /** Absolute location, e.g. `s3://bucket/ns/table/data/x.parquet`. */
  filePath: string;
  fileSizeInBytes: number | bigint;
  recordCount: number | bigint;
  metrics?: DataFileMetrics;
  /** The partition record (by Avro field name) under the spec the file is added with; absent when unpartitioned. */
  partition?: Record<string, unknown>;
}
