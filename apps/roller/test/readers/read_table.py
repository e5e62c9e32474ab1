"""Reads a sink's table with an independent engine and prints JSON on stdout.

usage: read_table.py pyiceberg <namespace> <table>
       read_table.py duckdb <metadata.json location>
       read_table.py snapshots <namespace> <table>
Settings come from the environment: ICEBERG_REST_URI, ICEBERG_WAREHOUSE, AWS_ENDPOINT_URL,
AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION. Timestamps are printed in UTC with
microseconds (`2026-09-21T12:00:00.123456Z`), so both engines' rows compare as text.
"""
import datetime
import json
import os
import sys
from urllib.parse import urlparse


def plain(value):
    if isinstance(value, datetime.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(datetime.timezone.utc).replace(tzinfo=None)
        return value.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def catalog():
    from pyiceberg.catalog import load_catalog

    env = os.environ
    return load_catalog(
        "c",
        type="rest",
        uri=env["ICEBERG_REST_URI"],
        warehouse=env["ICEBERG_WAREHOUSE"],
        credential=f"{env['AWS_ACCESS_KEY_ID']}:{env['AWS_SECRET_ACCESS_KEY']}",
        **{
            "s3.endpoint": env["AWS_ENDPOINT_URL"],
            "s3.access-key-id": env["AWS_ACCESS_KEY_ID"],
            "s3.secret-access-key": env["AWS_SECRET_ACCESS_KEY"],
            "s3.region": env["AWS_REGION"],
            "s3.path-style-access": "true",
        },
    )


def duckdb_rows(metadata_location):
    import duckdb
    from duckdb_extensions import import_extension

    for extension in ("avro", "iceberg", "httpfs"):
        import_extension(extension)
    env = os.environ
    endpoint = urlparse(env["AWS_ENDPOINT_URL"])
    con = duckdb.connect()
    con.execute("LOAD iceberg; LOAD httpfs; SET TimeZone = 'UTC';")
    con.execute(
        "CREATE SECRET (TYPE s3, KEY_ID ?, SECRET ?, ENDPOINT ?, URL_STYLE 'path', USE_SSL ?, REGION ?)",
        [env["AWS_ACCESS_KEY_ID"], env["AWS_SECRET_ACCESS_KEY"], endpoint.netloc, endpoint.scheme == "https", env["AWS_REGION"]],
    )
    table = con.execute("SELECT * FROM iceberg_scan(?)", [metadata_location]).to_arrow_table()
    return [plain(row) for row in table.to_pylist()]


def main():
    mode = sys.argv[1]
    if mode == "duckdb":
        out = {"rows": duckdb_rows(sys.argv[2])}
    else:
        table = catalog().load_table((sys.argv[2], sys.argv[3]))
        if mode == "pyiceberg":
            out = {"rows": [plain(row) for row in table.scan().to_arrow().to_pylist()]}
        elif mode == "snapshots":
            by_id = {s.snapshot_id: s for s in table.metadata.snapshots}
            current = table.metadata.current_snapshot_id
            chain = []
            while current is not None and current in by_id:
                s = by_id[current]
                chain.append({"snapshot_id": str(s.snapshot_id), "summary": dict(s.summary.additional_properties, operation=s.summary.operation.value)})
                current = s.parent_snapshot_id
            out = {"snapshots": chain}
        else:
            raise SystemExit(f"unknown mode {mode}")
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
