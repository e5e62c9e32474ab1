"""Connections of the independent readers (PyIceberg, DuckDB) to the stack's catalog and store.

Settings come from the environment, as `.stack/env` names them: ICEBERG_REST_URI,
ICEBERG_WAREHOUSE, AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION; and
ICEBERG_REST_AUTH=none for a catalog without authentication (Nessie as the stack runs it).
"""
import os
from urllib.parse import urlparse


def catalog(name="stack"):
    """The REST catalog through PyIceberg, with the store's keys for the data files."""
    from pyiceberg.catalog import load_catalog

    env = os.environ
    auth = {} if env.get("ICEBERG_REST_AUTH") == "none" else {"credential": f"{env['AWS_ACCESS_KEY_ID']}:{env['AWS_SECRET_ACCESS_KEY']}"}
    return load_catalog(
        name,
        type="rest",
        uri=env["ICEBERG_REST_URI"],
        warehouse=env["ICEBERG_WAREHOUSE"],
        **auth,
        **{
            "s3.endpoint": env["AWS_ENDPOINT_URL"],
            "s3.access-key-id": env["AWS_ACCESS_KEY_ID"],
            "s3.secret-access-key": env["AWS_SECRET_ACCESS_KEY"],
            "s3.region": env["AWS_REGION"],
            "s3.path-style-access": "true",
        },
    )


def duckdb_connection():
    """DuckDB with the iceberg, avro and httpfs extensions from their wheels (it cannot download
    them here), in UTC, with an S3 secret for the store."""
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
    return con
