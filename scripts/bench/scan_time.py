"""Times full scans of Iceberg tables by the independent readers, for bench:upkeep.

usage: scan_time.py <repeats> <namespace.table>=<metadata.json location> ...
Prints one JSON object: per table, the median seconds of a PyIceberg load + full scan to Arrow,
of a PyIceberg load + scan planning alone (the metadata a reader walks before any row), and of a
DuckDB `SELECT *` over iceberg_scan, and the rows each read.
Settings come from the environment (tests/readers/connections.py).
"""
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tests", "readers"))
from connections import catalog, duckdb_connection  # noqa: E402


def timed(run, repeats):
    seconds, rows = [], None
    for _ in range(repeats):
        started = time.perf_counter()
        rows = run()
        seconds.append(time.perf_counter() - started)
    return statistics.median(seconds), rows


def main():
    repeats = int(sys.argv[1])
    pyiceberg = catalog()
    duck = duckdb_connection()
    result = {}
    for arg in sys.argv[2:]:
        name, location = arg.split("=", 1)
        namespace, table = name.split(".", 1)
        py_s, py_rows = timed(lambda: pyiceberg.load_table((namespace, table)).scan().to_arrow().num_rows, repeats)
        plan_s, _ = timed(lambda: len(list(pyiceberg.load_table((namespace, table)).scan().plan_files())), repeats)
        duck_s, duck_rows = timed(lambda: duck.execute("SELECT * FROM iceberg_scan(?)", [location]).to_arrow_table().num_rows, repeats)
        result[name] = {"pyiceberg_s": py_s, "plan_s": plan_s, "pyiceberg_rows": py_rows, "duckdb_s": duck_s, "duckdb_rows": duck_rows}
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main()
