"""Runs the DuckDB snippet `tablemere connect` printed, then reads a table through the catalog.

usage: duckdb_check.py SNIPPET_FILE NAMESPACE TABLE
The `<NAME>` placeholders are filled from the environment, as a user pastes their secrets.
Extensions cannot be downloaded here, so INSTALL is replaced by the bundled wheels.
Prints one JSON line: the rows of the table, ordered by x.
"""
import json
import os
import re
import sys

import duckdb
from duckdb_extensions import import_extension

snippet_file, namespace, name = sys.argv[1:4]
for extension in ("avro", "iceberg", "httpfs"):
    import_extension(extension)

sql = open(snippet_file).read()
sql = re.sub(r"INSTALL \w+;", "", sql)
sql = re.sub(r"<([A-Z0-9_]+)>", lambda m: os.environ[m.group(1)].replace("'", "''"), sql)
catalog = re.search(r"^ATTACH '.*' AS (\w+) ", sql, re.M).group(1)

con = duckdb.connect()
for statement in sql.split(";"):
    if statement.strip():
        con.execute(statement)
rows = con.execute(f'SELECT x, who FROM {catalog}."{namespace}"."{name}" ORDER BY x').fetchall()
print(json.dumps({"rows": [{"x": x, "who": who} for x, who in rows]}))
