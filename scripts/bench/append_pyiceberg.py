"""The PyIceberg twin of the append benchmark: the same NDJSON appended with
pyarrow.json.read_json + Table.append, timed the same way.

usage: append_pyiceberg.py <ndjson file> <namespace> <table>
Connection settings come from the environment (ICEBERG_REST_URI, ICEBERG_WAREHOUSE,
AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION).
Prints one JSON object: rows, seconds, peak_rss_bytes.
"""
import json
import os
import resource
import sys
import time

import pyarrow.json as pj
from pyiceberg.catalog import load_catalog


def main():
    path, namespace, name = sys.argv[1:4]
    env = os.environ
    catalog = load_catalog(
        "bench",
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
    started = time.perf_counter()
    table = catalog.load_table((namespace, name))
    schema = table.schema().as_arrow()
    data = pj.read_json(path, parse_options=pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore"))
    table.append(data.cast(schema))
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    json.dump({"rows": data.num_rows, "seconds": seconds, "peak_rss_bytes": peak}, sys.stdout)


if __name__ == "__main__":
    main()
