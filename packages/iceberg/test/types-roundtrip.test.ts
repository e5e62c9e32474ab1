import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RestCatalog, S3FileIO, appendDataFiles, branchHead } from '../src/index.ts';
import { duckdbRows, pyicebergRows, type Row } from './readers.ts';
import { catalogOptions, jsonRowsToDataFile, storeOptions, uniqueName } from './support.ts';

/** Every type this library writes, nested ones included. Ids are reassigned by the catalog. */
const schema = {
  type: 'struct' as const,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'b', required: false, type: 'boolean' },
    { id: 3, name: 'i', required: false, type: 'int' },
    { id: 4, name: 'l', required: false, type: 'long' },
    { id: 5, name: 'f', required: false, type: 'float' },
    { id: 6, name: 'd', required: false, type: 'double' },
    { id: 7, name: 'dec38', required: false, type: 'decimal(38, 10)' },
    { id: 8, name: 'dec9', required: false, type: 'decimal(9, 2)' },
    { id: 9, name: 'dt', required: false, type: 'date' },
    { id: 10, name: 't', required: false, type: 'time' },
    { id: 11, name: 'ts', required: false, type: 'timestamp' },
    { id: 12, name: 'tstz', required: false, type: 'timestamptz' },
    { id: 13, name: 's', required: false, type: 'string' },
    { id: 14, name: 'u', required: false, type: 'uuid' },
    { id: 15, name: 'fx', required: false, type: 'fixed[4]' },
    { id: 16, name: 'bin', required: false, type: 'binary' },
    {
      id: 17,
      name: 'st',
      required: false,
      type: {
        type: 'struct',
        fields: [
          { id: 18, name: 'a', required: false, type: 'int' },
          { id: 19, name: 'inner', required: false, type: { type: 'struct', fields: [{ id: 20, name: 'x', required: false, type: 'string' }] } },
        ],
      },
    },
    { id: 21, name: 'li', required: false, type: { type: 'list', 'element-id': 22, element: 'long', 'element-required': false } },
    { id: 23, name: 'm', required: false, type: { type: 'map', 'key-id': 24, key: 'string', 'value-id': 25, value: 'int', 'value-required': false } },
  ],
};

/** Rows as producers send them: JSON text, big integers and decimals written out in full. */
const input = [
  `{"id": 1, "b": true, "i": 2147483647, "l": 9223372036854775807, "f": 3.4028234663852886e38, "d": 1.7976931348623157e308,
    "dec38": "9999999999999999999999999999.9999999999", "dec9": "9999999.99", "dt": "9999-12-31", "t": "23:59:59.999999",
    "ts": "2999-12-31T23:59:59.999999", "tstz": "2024-02-29T12:34:56.789012+05:30", "s": "h\u00e9llo w\u00f6rld \ud83c\udf0d \u65e5\u672c\u8a9e e\u0301",
    "u": "ffffffff-ffff-ffff-ffff-ffffffffffff", "fx": "3q2+7w==", "bin": "AAECAwQF/w==",
    "st": {"a": 7, "inner": {"x": "deep"}}, "li": [1, null, -9223372036854775808], "m": {"k": 1, "": null}}`,
  `{"id": 2, "b": false, "i": -2147483648, "l": -9223372036854775808, "f": -1.5, "d": -4.9e-324,
    "dec38": "-9999999999999999999999999999.9999999999", "dec9": -0.01, "dt": "0001-01-01", "t": "00:00:00",
    "ts": "1970-01-01T00:00:00", "tstz": "1900-01-01T00:00:00.000001Z", "s": "",
    "u": "00000000-0000-0000-0000-000000000000", "fx": "AAAAAA==", "bin": "",
    "st": {"a": null, "inner": null}, "li": [], "m": {}}`,
  `{"id": 3, "b": null, "i": null, "l": null, "f": null, "d": null, "dec38": null, "dec9": null, "dt": null, "t": null,
    "ts": null, "tstz": null, "s": null, "u": null, "fx": null, "bin": null, "st": null, "li": null, "m": null}`,
  `{"id": 4, "f": 0.1, "d": 0.1, "dec38": 12345678901234567890.0123456789, "dec9": 0, "l": 9007199254740993,
    "tstz": "1969-12-31T23:59:59.999999Z", "ts": "2024-06-01T08:30:00.5", "u": "123e4567-e89b-12d3-a456-426614174000",
    "st": {"inner": {"x": null}}, "li": [null], "m": {"z": -1}}`,
];

/** What a reader must return for each row, in the JSON the reader scripts print. */
const expected: Row[] = [
  {
    id: 1, b: true, i: 2147483647, l: 9223372036854775807n, f: 3.4028234663852886e38, d: 1.7976931348623157e308,
    dec38: '9999999999999999999999999999.9999999999', dec9: '9999999.99', dt: '9999-12-31', t: '23:59:59.999999',
    ts: '2999-12-31T23:59:59.999999', tstz: '2024-02-29T07:04:56.789012+00:00', s: 'h\u00e9llo w\u00f6rld \u{1f30d} \u65e5\u672c\u8a9e e\u0301',
    u: 'ffffffff-ffff-ffff-ffff-ffffffffffff', fx: '3q2+7w==', bin: 'AAECAwQF/w==',
    st: { a: 7, inner: { x: 'deep' } }, li: [1, null, -9223372036854775808n], m: [['k', 1], ['', null]],
  },
  {
    id: 2, b: false, i: -2147483648, l: -9223372036854775808n, f: -1.5, d: -5e-324,
    dec38: '-9999999999999999999999999999.9999999999', dec9: '-0.01', dt: '0001-01-01', t: '00:00:00.000000',
    ts: '1970-01-01T00:00:00.000000', tstz: '1900-01-01T00:00:00.000001+00:00', s: '',
    u: '00000000-0000-0000-0000-000000000000', fx: 'AAAAAA==', bin: '',
    st: { a: null, inner: null }, li: [], m: [],
  },
  {
    id: 3, b: null, i: null, l: null, f: null, d: null, dec38: null, dec9: null, dt: null, t: null,
    ts: null, tstz: null, s: null, u: null, fx: null, bin: null, st: null, li: null, m: null,
  },
  {
    id: 4, b: null, i: null, l: 9007199254740993n, f: Math.fround(0.1), d: 0.1,
    dec38: '12345678901234567890.0123456789', dec9: '0.00', dt: null, t: null,
    ts: '2024-06-01T08:30:00.500000', tstz: '1969-12-31T23:59:59.999999+00:00', s: null,
    u: '123e4567-e89b-12d3-a456-426614174000', fx: null, bin: null,
    st: { a: null, inner: { x: null } }, li: [null], m: [['z', -1]],
  },
];

const UUID_BYTES = 16;

/** Readers differ only in how they hand over uuids (text or raw bytes); compare as text. */
function normalise(row: Row): Row {
  const u = row['u'];
  if (typeof u === 'string' && !u.includes('-')) {
    const bytes = Buffer.from(u, 'base64');
    if (bytes.length === UUID_BYTES) {
      const hex = bytes.toString('hex');
      return { ...row, u: `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}` };
    }
  }
  return row;
}

function byId(rows: Row[]): Row[] {
  return rows.map(normalise).sort((a, b) => Number(a['id']) - Number(b['id']));
}

describe('every supported type, appended and read back by independent readers', () => {
  const namespace = uniqueName('it_types');
  const table = { namespace, name: 'all_types' };
  let catalog: RestCatalog;
  let io: S3FileIO;
  let metadataLocation: string | undefined;

  beforeAll(async () => {
    catalog = await RestCatalog.connect(catalogOptions());
    io = new S3FileIO(storeOptions());
    await catalog.createNamespace(namespace);
    const created = await catalog.createTable(namespace, table.name, { schema });
    const dataFile = await jsonRowsToDataFile(io, created.metadata, input);
    const result = await appendDataFiles({ catalog, table, io, base: created, dataFiles: [dataFile] });
    expect(branchHead(result.metadata)?.summary['added-records']).toBe('4');
    metadataLocation = (await catalog.loadTable(table)).metadataLocation;
  });

  afterAll(async () => {
    io.close();
    await catalog.dropTable(table, { purge: true });
    await catalog.dropNamespace(namespace);
  });

  it('PyIceberg reads every value exactly', async () => {
    expect(byId(await pyicebergRows(namespace, table.name))).toEqual(expected);
  });

  it('DuckDB iceberg_scan reads every value exactly', async () => {
    expect(metadataLocation).toBeDefined();
    expect(byId(await duckdbRows(metadataLocation!))).toEqual(expected);
  });
});
