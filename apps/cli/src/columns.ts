import { ColumnName, formatIcebergPrimitive, parseIcebergPrimitive } from '@tablemere/contracts';
import { usageError } from './errors.ts';

/** A column as the create-table request carries it. */
export interface ColumnSpec {
  readonly name: string;
  /** An Iceberg primitive type in its canonical form (`decimal(10,2)`, `fixed[16]`). */
  readonly type: string;
  readonly required: boolean;
}

/**
 * Parses one `--column name:type[:required]`. No type holds a colon (`decimal(10,2)` holds a
 * comma, `fixed[16]` brackets), so the spec splits on colons; the type grammar is the
 * contracts' own, so the CLI refuses exactly what the API would.
 */
export function parseColumn(spec: string): ColumnSpec {
  const fail = (reason: string) => usageError(`--column '${spec}': ${reason}`);
  const [name = '', typeText, flag, ...extra] = spec.split(':').map((part) => part.trim());
  if (typeText === undefined || extra.length > 0) throw fail('write name:type or name:type:required');

  const validName = ColumnName.safeParse(name);
  if (!validName.success) throw fail(`bad column name '${name}': ${validName.error.issues[0]?.message ?? 'invalid'}`);

  if (flag !== undefined && flag.toLowerCase() !== 'required') throw fail(`unknown suffix '${flag}' (only ':required')`);

  const type = parseIcebergPrimitive(typeText);
  if (!type.ok) throw fail(type.reason);

  return { name, type: formatIcebergPrimitive(type.type), required: flag !== undefined };
}
