"""A scan of Iceberg tables filtered on one day of __ingest_ts, for bench:upkeep --partitioned.

usage: day_plan.py <YYYY-MM-DD> <namespace.table> ...
Prints one JSON object: per table, the data files the filtered scan plans (PyIceberg
plan_files), the files a full scan plans, the rows the filtered scan returns, and its seconds
(load, plan and read). Settings come from the environment (tests/readers/connections.py).
"""
import datetime
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tests", "readers"))
from connections import catalog  # noqa: E402
from pyiceberg.expressions import And, GreaterThanOrEqual, LessThan  # noqa: E402


def main():
    day = datetime.date.fromisoformat(sys.argv[1])
    start = f"{day.isoformat()}T00:00:00+00:00"
    end = f"{(day + datetime.timedelta(days=1)).isoformat()}T00:00:00+00:00"
    pyiceberg = catalog()
    result = {}
    for name in sys.argv[2:]:
        namespace, table = name.split(".", 1)
        started = time.perf_counter()
        loaded = pyiceberg.load_table((namespace, table))
        scan = loaded.scan(row_filter=And(GreaterThanOrEqual("__ingest_ts", start), LessThan("__ingest_ts", end)))
        planned = len(list(scan.plan_files()))
        rows = scan.to_arrow().num_rows
        seconds = time.perf_counter() - started
        result[name] = {"planned": planned, "files": len(list(loaded.scan().plan_files())), "rows": rows, "seconds": seconds}
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main()
