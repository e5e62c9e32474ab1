"""The owner partitions a table with PyIceberg, and scans plan against its partitions.

usage: partitioning.py partition <namespace> <table> <source>:<transform>[:<name>] ...
         adds partition fields to the default spec (transform: identity, bucket[N],
         truncate[W], year, month, day, hour); prints {"spec_id": ...}
       partitioning.py plan <namespace> <table> <column> <value>
         prints {"planned": files a scan for column == value plans, "files": files in the
         table, "rows": the rows that scan returns}
Values are JSON. Settings come from the environment (connections.py).
"""
import json
import sys

from pyiceberg.expressions import EqualTo
from pyiceberg.transforms import parse_transform

from connections import catalog
from values import plain


def partition(table, fields):
    with table.update_spec() as update:
        for text in fields:
            source, transform, *name = text.split(":")
            update.add_field(source, parse_transform(transform), name[0] if name else None)
    return {"spec_id": table.refresh().spec().spec_id}


def plan(table, column, value):
    scan = table.scan(row_filter=EqualTo(column, json.loads(value)))
    return {
        "planned": len(list(scan.plan_files())),
        "files": len(list(table.scan().plan_files())),
        "rows": [plain(row) for row in scan.to_arrow().to_pylist()],
    }


def main():
    mode, namespace, name, *args = sys.argv[1:]
    table = catalog().load_table((namespace, name))
    if mode == "partition":
        out = partition(table, args)
    elif mode == "plan":
        out = plan(table, *args)
    else:
        raise SystemExit(f"unknown mode {mode}")
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
