/**
 * Stand-in for the shared schema inference (packages/contracts, branch t25-create) until it is
 * merged: the type one JSON value implies. undefined when it implies none (null, [], {}).
 */
export type InferredType =
  | 'long'
  | 'double'
  | 'timestamptz'
  | 'string'
  | 'boolean'
  | { type: 'struct'; fields: Array<{ name: string; type: InferredType }> }
  | { type: 'list'; element: InferredType };

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d{1,6})?([Zz]|[+-]\d{2}:\d{2})$/;

export function inferValueType(value: unknown): InferredType | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value === 'boolean') return 'boolean';
  if (typeof value === 'number') return Number.isInteger(value) ? 'long' : 'double';
  if (typeof value === 'string') return RFC3339.test(value) ? 'timestamptz' : 'string';
  if (Array.isArray(value)) {
    let element: InferredType | undefined;
    for (const item of value) element = widen(element, inferValueType(item));
    return element === undefined ? undefined : { type: 'list', element };
  }
  if (typeof value === 'object') {
    const fields: Array<{ name: string; type: InferredType }> = [];
    for (const [name, item] of Object.entries(value)) {
      const type = inferValueType(item);
      if (type !== undefined) fields.push({ name, type });
    }
    return fields.length === 0 ? undefined : { type: 'struct', fields };
  }
  return undefined;
}

/** Two values' types as one: long and double make double, structs and lists merge; otherwise the first. */
export function widen(a: InferredType | undefined, b: InferredType | undefined): InferredType | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  if (typeof a === 'string' || typeof b === 'string') {
    if ((a === 'long' && b === 'double') || (a === 'double' && b === 'long')) return 'double';
    return a;
  }
  if (a.type === 'list' && b.type === 'list') return { type: 'list', element: widen(a.element, b.element)! };
  if (a.type === 'struct' && b.type === 'struct') {
    const fields = a.fields.map((f) => ({ ...f }));
    for (const field of b.fields) {
      const same = fields.find((f) => f.name === field.name);
      if (same) same.type = widen(same.type, field.type)!;
      else fields.push(field);
    }
    return { type: 'struct', fields };
  }
  return a;
}
