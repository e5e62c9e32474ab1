"""Phase 10 reader: the table as DuckDB and PyIceberg see it, configured only from .stack/env."""
import json
import os
import sys

import duckdb
from duckdb_extensions import import_extension
from pyiceberg.catalog import load_catalog

table_name, sink_id = sys.argv[1], sys.argv[2]
table = load_catalog(os.environ["TABLEMERE_WAREHOUSE"]).load_table(table_name)
arrow = table.scan().to_arrow()
# Compare instants as epoch microseconds: both readers, no time-zone library needed.
arrow = arrow.set_column(arrow.schema.get_field_index("__ingest_ts"), "__ingest_ts", arrow["__ingest_ts"].cast("int64"))
py_rows = sorted(arrow.to_pylist(), key=lambda r: r["x"])

for ext in ("avro", "iceberg", "httpfs"):
    import_extension(ext)
con = duckdb.connect()
con.sql("LOAD iceberg; LOAD httpfs;")
endpoint = os.environ["AWS_ENDPOINT_URL"].removeprefix("http://")
con.sql(
    f"CREATE SECRET (TYPE s3, KEY_ID '{os.environ['AWS_ACCESS_KEY_ID']}', SECRET '{os.environ['AWS_SECRET_ACCESS_KEY']}', "
    f"ENDPOINT '{endpoint}', URL_STYLE 'path', USE_SSL false, REGION '{os.environ['AWS_REGION']}')"
)
duck_rows = con.sql(
    f"SELECT x, who, epoch_us(__ingest_ts) FROM iceberg_scan('{table.metadata_location}') ORDER BY x"
).fetchall()

want = [(1, "north"), (2, None), (4, "south")]
problems = []
if [(r["x"], r["who"]) for r in py_rows] != want:
    problems.append(f"PyIceberg rows {py_rows}")
if [(x, who) for x, who, _ in duck_rows] != want:
    problems.append(f"DuckDB rows {duck_rows}")
if any(r["__ingest_ts"] is None for r in py_rows):
    problems.append("a row without __ingest_ts")
if [r["__ingest_ts"] for r in py_rows] != [ts for _, _, ts in duck_rows]:
    problems.append("DuckDB and PyIceberg disagree on __ingest_ts")
summary = table.current_snapshot().summary
if summary.get("tablemere.sink.id") != sink_id:
    problems.append(f"snapshot summary {dict(summary.additional_properties)}")
print(json.dumps({"pyiceberg": len(py_rows), "duckdb": len(duck_rows), "problems": problems}, default=str))
sys.exit(1 if problems else 0)
