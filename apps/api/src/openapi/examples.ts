type Json = Record<string, unknown>;

const SECRET = 'N6XnSA-YOAbt3hqaxFHph0gfJ04UHTZbWE8aBmTPC60';

/** Strings for fields known by name, where the shape alone would pick a poor one. */
const BY_NAME: Record<string, string> = {
  batch_id: '2026-09-21T12:00:00Z-0001',
  table: 'garden.events',
  namespace: 'garden',
  warehouse: 'garden',
  name: 'events_in',
  month: '2026-09',
  snapshot_id: '6141668973009144820',
  roller_id: 'roller-1',
  code: 'catalog_unavailable',
  message: "The warehouse's Iceberg catalog could not be reached.",
  table_uuid: '6b0c2a8e-31d4-4f7a-9c55-0e2d7f8a1b93',
  ingest_url: 'http://127.0.0.1:8787/v1/sinks/snk_3f2a9c1b7d4e',
  api_url: 'http://127.0.0.1:8787',
  rest_uri: 'http://127.0.0.1:8181',
  endpoint: 'http://127.0.0.1:8333',
  region: 'us-east-1',
};

/** Strings to try, most particular first: the first that fits a field's pattern is its example. */
const CANDIDATES = [
  'snk_3f2a9c1b7d4e',
  `tm_send_3f2a9c1b7d4e_${SECRET}`,
  `tm_key_9b1e7c3a5d2f_${SECRET}`,
  '9b1e7c3a5d2f',
  '2026-09',
  'garden.events',
  'events',
  'x',
  '2026-09-21T12:00:00Z-0001',
];

const FORMATS: Record<string, string> = {
  'date-time': '2026-09-21T12:00:00.123456Z',
  uuid: '0f5c2f4e-8a51-4c1e-9d07-2b8e3a6c1d90',
  uri: 'http://127.0.0.1:8181/catalog',
};

function stringOf(schema: Json, name: string | undefined): string {
  const format = typeof schema.format === 'string' ? FORMATS[schema.format] : undefined;
  if (format) return format;
  const pattern = typeof schema.pattern === 'string' ? new RegExp(schema.pattern) : undefined;
  const named = name === undefined ? undefined : BY_NAME[name];
  if (named !== undefined && (!pattern || pattern.test(named))) return named;
  if (!pattern) return name ?? 'text';
  return CANDIDATES.find((candidate) => pattern.test(candidate)) ?? 'text';
}

/**
 * A plausible value of a JSON Schema, for an answer's example where none is written by hand:
 * consts and enums as given, the first non-null branch of a union, the bounds of numbers,
 * and strings by format, field name or pattern. The caller checks it against the contract.
 */
export function exampleOf(schema: Json, name?: string): unknown {
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const branches = (schema.anyOf ?? schema.oneOf) as Json[] | undefined;
  if (branches) return exampleOf(branches.find((branch) => branch.type !== 'null') ?? branches[0]!, name);
  if ('default' in schema) return schema.default;
  // `["string", "null"]`: the first type that is not null.
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  switch (type) {
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, Json>;
      return Object.fromEntries(Object.entries(properties).map(([key, property]) => [key, exampleOf(property, key)]));
    }
    case 'array': {
      const length = typeof schema.minItems === 'number' ? schema.minItems : 1;
      const maxItems = typeof schema.maxItems === 'number' ? schema.maxItems : 1;
      return Array.from({ length: Math.min(Math.max(length, 1), maxItems) }, () => exampleOf((schema.items ?? {}) as Json, name));
    }
    case 'integer':
    case 'number':
      return typeof schema.minimum === 'number' && schema.minimum > 0 ? schema.minimum : type === 'integer' ? 1 : 1.5;
    case 'boolean':
      return true;
    case 'string':
      return stringOf(schema, name);
    default:
      return null;
  }
}
