"""Runs the PyIceberg snippet `tablemere connect` printed, then uses the catalog it defines.

usage: pyiceberg_check.py SNIPPET_FILE NAMESPACE TABLE
Credentials come from the environment, as the snippet expects. Appends two rows through the
table's own schema (x required, who optional) and prints one JSON line: the schema and the rows.
"""
import contextlib
import io
import json
import sys

import pyarrow as pa

snippet_file, namespace, name = sys.argv[1:4]
scope: dict = {}
with contextlib.redirect_stdout(io.StringIO()):  # the snippet prints its namespaces
    exec(open(snippet_file).read(), scope)
catalog = scope["catalog"]

table = catalog.load_table((namespace, name))
fields = [
    {"id": f.field_id, "name": f.name, "type": str(f.field_type), "required": f.required}
    for f in table.schema().fields
]
rows = pa.Table.from_pylist([{"x": 1, "who": "north"}, {"x": 2, "who": None}], schema=table.schema().as_arrow())
table.append(rows)
read = sorted(table.refresh().scan().to_arrow().to_pylist(), key=lambda r: r["x"])
print(json.dumps({"fields": fields, "rows": read}))
