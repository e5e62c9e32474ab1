import type { Schema } from '../spec/schema.ts';
import { indexById } from '../spec/schema.ts';
import { footerTrailer, splitFooter } from './parquet-footer.ts';
import { field, type ThriftList, type ThriftStruct, ThriftType } from './thrift-compact.ts';

// FileMetaData.schema, SchemaElement.field_id / logicalType, LogicalType.UUID (parquet.thrift).
const FILE_SCHEMA = 2;
const ELEMENT_FIELD_ID = 9;
const ELEMENT_LOGICAL_TYPE = 10;
const LOGICAL_UUID = 14;

/** Field ids of the schema's uuid fields, at any depth. */
function uuidFieldIds(schema: Schema): Set<number> {
  const ids = new Set<number>();
  for (const [id, f] of indexById(schema)) if (f.type.kind === 'uuid') ids.add(id);
  return ids;
}

/**
 * Marks the uuid columns of a file written from Arrow with Parquet's UUID logical type, which
 * the Iceberg spec maps uuid to: Arrow has no uuid type the writer knows, so it writes a bare
 * fixed_len_byte_array(16), which Java readers return as bytes. Only the footer changes.
 */
export function annotateUuidColumns(bytes: Uint8Array, schema: Schema): Uint8Array {
  const ids = uuidFieldIds(schema);
  if (ids.size === 0) return bytes;
  const { footer, footerStart } = splitFooter(bytes);
  const elements = (field(footer, FILE_SCHEMA)?.value as ThriftList).items as ThriftStruct[];
  let changed = false;
  for (const element of elements) {
    const id = field(element, ELEMENT_FIELD_ID)?.value;
    if (typeof id !== 'number' || !ids.has(id) || field(element, ELEMENT_LOGICAL_TYPE) !== undefined) continue;
    const uuid: ThriftStruct = { kind: 'struct', fields: [{ id: LOGICAL_UUID, type: ThriftType.Struct, value: { kind: 'struct', fields: [] } }] };
    const at = element.fields.findIndex((f) => f.id > ELEMENT_LOGICAL_TYPE);
    element.fields.splice(at < 0 ? element.fields.length : at, 0, { id: ELEMENT_LOGICAL_TYPE, type: ThriftType.Struct, value: uuid });
    changed = true;
  }
  if (!changed) return bytes;
  const trailer = footerTrailer(footer);
  const out = new Uint8Array(footerStart + trailer.length);
  out.set(bytes.subarray(0, footerStart));
  out.set(trailer, footerStart);
  return out;
}
