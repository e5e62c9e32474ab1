"""Counts one column of an Iceberg table through PyIceberg, for bench:fanin's exactness check.

usage: fanin_count.py <namespace> <table> <column>
Prints one JSON object: rows, distinct values of the column and their sum (as a string: exact).
Settings come from the environment (tests/readers/connections.py).
"""
import json
import os
import sys

import pyarrow.compute as pc

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tests", "readers"))
from connections import catalog  # noqa: E402


def main():
    namespace, table, column = sys.argv[1:4]
    values = catalog().load_table((namespace, table)).scan(selected_fields=(column,)).to_arrow()[column]
    total = pc.sum(values.cast("int64")).as_py() if len(values) else 0
    json.dump({"rows": len(values), "distinct": pc.count_distinct(values).as_py(), "sum": str(total)}, sys.stdout)


main()
