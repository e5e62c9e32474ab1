"""Another writer: appends one row at a time to a table with PyIceberg until told to stop.

usage: append_loop.py <namespace> <table> <stop file> [pause seconds] [most appends]
Appends {"x": -1, "who": "other writer"} (x negative, so it is told apart from sink rows)
until the stop file exists (or after the most appends), pausing between appends, then prints
{"appends": N, "seconds": S}.
Conflicts are retried, as any engine would.
"""
import json
import os
import sys
import time

import pyarrow as pa
from pyiceberg.exceptions import CommitFailedException

from connections import catalog

namespace, name, stop_file = sys.argv[1:4]
pause = float(sys.argv[4]) if len(sys.argv) > 4 else 0.0
most = int(sys.argv[5]) if len(sys.argv) > 5 else None
table = catalog().load_table((namespace, name))
appends = 0
started = time.time()
while not os.path.exists(stop_file) and (most is None or appends < most):
    table = table.refresh()
    schema = table.schema().as_arrow()
    row = {f.name: None for f in schema}
    row.update({"x": -1 - appends, "who": "other writer"})
    try:
        table.append(pa.Table.from_pylist([row], schema=schema))
        appends += 1
        time.sleep(pause)
    except CommitFailedException:
        time.sleep(0.05)
print(json.dumps({"appends": appends, "seconds": round(time.time() - started, 1)}))
