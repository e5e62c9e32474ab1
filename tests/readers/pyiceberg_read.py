"""Reads an Iceberg table with PyIceberg and prints JSON on stdout.

usage: pyiceberg_read.py rows|snapshots|schema <namespace> <table>
Connection settings come from the environment (connections.py).
"""
import json
import sys

from connections import catalog
from values import plain


def snapshot_chain(table):
    """The snapshots along main, newest first, as the ancestry walk sees them."""
    by_id = {s.snapshot_id: s for s in table.metadata.snapshots}
    current = table.metadata.current_snapshot_id
    chain = []
    while current is not None and current in by_id:
        s = by_id[current]
        chain.append({"snapshot-id": str(s.snapshot_id), "summary": dict(s.summary.additional_properties, operation=s.summary.operation.value)})
        current = s.parent_snapshot_id
    return chain


def main():
    mode, namespace, name = sys.argv[1:4]
    table = catalog().load_table((namespace, name))
    if mode == "rows":
        out = {"rows": [plain(row) for row in table.scan().to_arrow().to_pylist()]}
    elif mode == "snapshots":
        out = {"snapshots": snapshot_chain(table)}
    elif mode == "schema":
        out = {"schema": json.loads(table.schema().model_dump_json())}
    else:
        raise SystemExit(f"unknown mode {mode}")
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
