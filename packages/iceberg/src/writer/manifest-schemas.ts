/**
 * The Avro schemas of format v2 manifests and manifest lists, as data. Field names, ids and
 * record names follow the Iceberg spec (and the Java and Python writers): every field carries
 * `field-id`, arrays carry `element-id`, maps are arrays of `k<key-id>_v<value-id>` records
 * with logicalType "map", optional fields are `["null", T]` with default null.
 */

type AvroField = Record<string, unknown>;

function required(name: string, id: number, type: unknown): AvroField {
  return { name, type, 'field-id': id };
}

function optional(name: string, id: number, type: unknown): AvroField {
  return { name, type: ['null', type], default: null, 'field-id': id };
}

function listOf(elementId: number, items: unknown): Record<string, unknown> {
  return { type: 'array', 'element-id': elementId, items };
}

function intMapOf(keyId: number, valueId: number, valueType: string): Record<string, unknown> {
  return {
    type: 'array',
    logicalType: 'map',
    items: {
      type: 'record',
      name: `k${keyId}_v${valueId}`,
      fields: [required('key', keyId, 'int'), required('value', valueId, valueType)],
    },
  };
}

/** A field of a manifest's partition record: the partition field's Avro name, id and value type. */
export interface AvroPartitionField {
  name: string;
  fieldId: number;
  type: unknown;
}

/** The manifest formats written: v2, and v3 with row lineage and deletion-vector fields. */
export type ManifestFormatVersion = 2 | 3;

/** `data_file` (field 2) of a manifest entry; the partition record has one optional field per partition field. */
function dataFileSchema(partition: readonly AvroPartitionField[], formatVersion: ManifestFormatVersion): Record<string, unknown> {
  return {
    type: 'record',
    name: 'r2',
    fields: [
      required('content', 134, 'int'),
      required('file_path', 100, 'string'),
      required('file_format', 101, 'string'),
      required('partition', 102, { type: 'record', name: 'r102', fields: partition.map((f) => optional(f.name, f.fieldId, f.type)) }),
      required('record_count', 103, 'long'),
      required('file_size_in_bytes', 104, 'long'),
      optional('column_sizes', 108, intMapOf(117, 118, 'long')),
      optional('value_counts', 109, intMapOf(119, 120, 'long')),
      optional('null_value_counts', 110, intMapOf(121, 122, 'long')),
      optional('nan_value_counts', 137, intMapOf(138, 139, 'long')),
      optional('lower_bounds', 125, intMapOf(126, 127, 'bytes')),
      optional('upper_bounds', 128, intMapOf(129, 130, 'bytes')),
      optional('key_metadata', 131, 'bytes'),
      optional('split_offsets', 132, listOf(133, 'long')),
      optional('equality_ids', 135, listOf(136, 'int')),
      optional('sort_order_id', 140, 'int'),
      ...(formatVersion >= 3
        ? [
            optional('first_row_id', 142, 'long'),
            optional('referenced_data_file', 143, 'string'),
            optional('content_offset', 144, 'long'),
            optional('content_size_in_bytes', 145, 'long'),
          ]
        : []),
    ],
  };
}

/** `manifest_entry` of a format version, for a spec with these partition fields. */
export function manifestEntrySchema(partition: readonly AvroPartitionField[], formatVersion: ManifestFormatVersion = 2): string {
  return JSON.stringify({
    type: 'record',
    name: 'manifest_entry',
    fields: [
      required('status', 0, 'int'),
      optional('snapshot_id', 1, 'long'),
      optional('sequence_number', 3, 'long'),
      optional('file_sequence_number', 4, 'long'),
      required('data_file', 2, dataFileSchema(partition, formatVersion)),
    ],
  });
}

/** `manifest_entry`, format v2, unpartitioned. */
export const MANIFEST_ENTRY_V2_SCHEMA = manifestEntrySchema([]);

/** `manifest_file`: one record per manifest in a manifest list; v3 adds the manifest's first row id. */
export function manifestFileSchema(formatVersion: ManifestFormatVersion): string {
  const v2 = JSON.parse(MANIFEST_FILE_V2_SCHEMA) as { fields: unknown[] };
  if (formatVersion === 2) return MANIFEST_FILE_V2_SCHEMA;
  return JSON.stringify({ ...v2, fields: [...v2.fields, optional('first_row_id', 520, 'long')] });
}

/** `manifest_file`, format v2. */
export const MANIFEST_FILE_V2_SCHEMA = JSON.stringify({
  type: 'record',
  name: 'manifest_file',
  fields: [
    required('manifest_path', 500, 'string'),
    required('manifest_length', 501, 'long'),
    required('partition_spec_id', 502, 'int'),
    required('content', 517, 'int'),
    required('sequence_number', 515, 'long'),
    required('min_sequence_number', 516, 'long'),
    required('added_snapshot_id', 503, 'long'),
    required('added_files_count', 504, 'int'),
    required('existing_files_count', 505, 'int'),
    required('deleted_files_count', 506, 'int'),
    required('added_rows_count', 512, 'long'),
    required('existing_rows_count', 513, 'long'),
    required('deleted_rows_count', 514, 'long'),
    optional(
      'partitions',
      507,
      listOf(508, {
        type: 'record',
        name: 'r508',
        fields: [
          required('contains_null', 509, 'boolean'),
          optional('contains_nan', 518, 'boolean'),
          optional('lower_bound', 510, 'bytes'),
          optional('upper_bound', 511, 'bytes'),
        ],
      }),
    ),
    optional('key_metadata', 519, 'bytes'),
  ],
});
