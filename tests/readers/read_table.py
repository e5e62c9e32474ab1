"""Reads a sink's table with an independent engine and prints its rows as JSON on stdout, with
timestamps in UTC with microseconds (`2026-09-21T12:00:00.123456Z`), so that both engines' rows
compare as text with what the roller was sent.

usage: read_table.py pyiceberg <namespace> <table> [<column>,<column>...]
       read_table.py duckdb <metadata.json location>
Settings come from the environment (connections.py).
"""
import datetime
import json
import sys

import values
from connections import catalog, duckdb_connection


def plain(value):
    if isinstance(value, datetime.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(datetime.timezone.utc).replace(tzinfo=None)
        return value.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    # Decimals, dates, uuids, bytes: values.py's JSON forms, which every reader shares.
    return values.plain(value)


def main():
    mode = sys.argv[1]
    if mode == "duckdb":
        rows = duckdb_connection().execute("SELECT * FROM iceberg_scan(?)", [sys.argv[2]]).to_arrow_table().to_pylist()
    elif mode == "pyiceberg":
        # Only the columns named, when named: a wide table is read back without its bulk.
        columns = tuple(sys.argv[4].split(",")) if len(sys.argv) > 4 else ("*",)
        rows = catalog().load_table((sys.argv[2], sys.argv[3])).scan(selected_fields=columns).to_arrow().to_pylist()
    else:
        raise SystemExit(f"unknown mode {mode}")
    json.dump({"rows": [plain(row) for row in rows]}, sys.stdout)


if __name__ == "__main__":
    main()
