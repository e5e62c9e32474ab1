"""Reads an Iceberg table with PyIceberg and prints JSON on stdout.

usage: pyiceberg_read.py rows|snapshots|schema <namespace> <table>
Connection settings come from the environment: ICEBERG_REST_URI, ICEBERG_WAREHOUSE,
AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION.
"""
import json
import os
import sys

from pyiceberg.catalog import load_catalog

from values import plain


def catalog():
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


def main():
    mode, namespace, name = sys.argv[1:4]
    table = catalog().load_table((namespace, name))
    if mode == "rows":
        arrow = table.scan().to_arrow()
        out = {"rows": [plain(row) for row in arrow.to_pylist()]}
    elif mode == "snapshots":
        # Newest first along main, as the ancestry walk sees it.
        by_id = {s.snapshot_id: s for s in table.metadata.snapshots}
        current = table.metadata.current_snapshot_id
        chain = []
        while current is not None and current in by_id:
            s = by_id[current]
            chain.append({"snapshot-id": str(s.snapshot_id), "summary": dict(s.summary.additional_properties, operation=s.summary.operation.value)})
            current = s.parent_snapshot_id
        out = {"snapshots": chain}
    elif mode == "schema":
        out = {"schema": json.loads(table.schema().model_dump_json())}
    else:
        raise SystemExit(f"unknown mode {mode}")
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
