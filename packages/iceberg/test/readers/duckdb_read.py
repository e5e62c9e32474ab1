"""Reads an Iceberg table with DuckDB's iceberg_scan and prints its rows as JSON on stdout.

usage: duckdb_read.py <metadata.json location>
S3 settings come from the environment: AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID,
AWS_SECRET_ACCESS_KEY, AWS_REGION.
"""
import json
import os
import sys
from urllib.parse import urlparse

import duckdb
from duckdb_extensions import import_extension

from values import plain


def connect():
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
    return con


def main():
    metadata_location = sys.argv[1]
    con = connect()
    # Through Arrow, as PyIceberg hands rows over, so both readers' values compare alike.
    table = con.execute("SELECT * FROM iceberg_scan(?)", [metadata_location]).to_arrow_table()
    json.dump({"rows": [plain(row) for row in table.to_pylist()]}, sys.stdout)


if __name__ == "__main__":
    main()
