"""Reads an Iceberg table with DuckDB's iceberg_scan and prints its rows as JSON on stdout.

usage: duckdb_read.py <metadata.json location>
S3 settings come from the environment (connections.py).
"""
import json
import sys

from connections import duckdb_connection
from values import plain


def main():
    # Through Arrow, as PyIceberg hands rows over, so both readers' values compare alike.
    table = duckdb_connection().execute("SELECT * FROM iceberg_scan(?)", [sys.argv[1]]).to_arrow_table()
    json.dump({"rows": [plain(row) for row in table.to_pylist()]}, sys.stdout)


if __name__ == "__main__":
    main()
