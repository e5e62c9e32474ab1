"""Another writer: replaces every row of a table with one row of its own, with PyIceberg.

usage: overwrite.py <namespace> <table>
Writes {"x": -1, "who": "overwrite"}: the snapshot deletes every data file the table had.
"""
import sys

import pyarrow as pa

from connections import catalog

namespace, name = sys.argv[1:3]
table = catalog().load_table((namespace, name))
schema = table.schema().as_arrow()
row = {f.name: None for f in schema}
row.update({"x": -1, "who": "overwrite"})
table.overwrite(pa.Table.from_pylist([row], schema=schema))
