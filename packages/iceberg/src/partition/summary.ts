import type { FieldSummary } from '../writer/manifest-list.ts';
import type { BoundPartitionSpec } from './bound-spec.ts';
import type { PartitionValue } from './transforms.ts';
import { compareValues, fromAvroValue, singleValueBytes } from './values.ts';

/**
 * The partition field summaries of a manifest list entry (field 507): per partition field,
 * whether any file's value is null or NaN, and the least and greatest other values, so
 * readers can skip the whole manifest. `records` are the files' partition records.
 */
export function partitionSummaries(spec: BoundPartitionSpec, records: readonly Record<string, unknown>[]): FieldSummary[] {
  return spec.fields.map((field) => {
    let containsNull = false;
    let containsNan = false;
    let lower: Exclude<PartitionValue, null> | undefined;
    let upper: Exclude<PartitionValue, null> | undefined;
    for (const record of records) {
      const value = fromAvroValue(field.result, record[field.avroName]);
      if (value === null) containsNull = true;
      else if (typeof value === 'number' && Number.isNaN(value)) containsNan = true;
      else {
        if (lower === undefined || compareValues(field.result, value, lower) < 0) lower = value;
        if (upper === undefined || compareValues(field.result, value, upper) > 0) upper = value;
      }
    }
    const floating = field.result.kind === 'float' || field.result.kind === 'double';
    return {
      contains_null: containsNull,
      contains_nan: floating ? containsNan : null,
      lower_bound: lower === undefined ? null : singleValueBytes(field.result, lower),
      upper_bound: upper === undefined ? null : singleValueBytes(field.result, upper),
    };
  });
}
