"""The table owner's upkeep, as another engine does it: runs the steps given, in order, with PyIceberg.

usage: owner_upkeep.py <namespace> <table> <step> [<step> ...]
steps:
  compact       rewrites every row into one data file (an overwrite of the whole table: one
                commit with a delete and an append snapshot; the old files are no longer live)
  merge-append  appends one row {"x": -1, "who": "table owner"} with manifest merging on, so
                the head's manifests are merged into one whose entries keep their snapshot ids
  expire        expires every snapshot but main's head
Prints {"snapshots": [ids kept], "metadata_location": ..., "metadata_log": [files listed],
"owner_rows": [x of the rows it appended]} on stdout. Settings come from the environment
(connections.py).
"""
import json
import sys

import pyarrow as pa

from connections import catalog

# Merge whenever two manifests or more exist (the default waits for 100).
MERGE_PROPERTIES = {"commit.manifest-merge.enabled": "true", "commit.manifest.min-count-to-merge": "2"}


def compact(table, _out):
    table.overwrite(table.scan().to_arrow())


def merge_append(table, out):
    schema = table.schema().as_arrow()
    row = {f.name: None for f in schema}
    row.update({"x": -1, "who": "table owner"})
    with table.transaction() as tx:
        tx.set_properties(MERGE_PROPERTIES)
        tx.append(pa.Table.from_pylist([row], schema=schema))
    out["owner_rows"].append(-1)


def expire(table, _out):
    head = table.metadata.current_snapshot_id
    older = [s.snapshot_id for s in table.metadata.snapshots if s.snapshot_id != head]
    if older:
        table.maintenance.expire_snapshots().by_ids(older).commit()


STEPS = {"compact": compact, "merge-append": merge_append, "expire": expire}


def main():
    namespace, name, *steps = sys.argv[1:]
    unknown = [s for s in steps if s not in STEPS]
    if not steps or unknown:
        raise SystemExit(f"steps: {' '.join(STEPS)} (got {' '.join(steps) or 'none'})")
    table = catalog().load_table((namespace, name))
    out = {"owner_rows": []}
    for step in steps:
        STEPS[step](table, out)
        table = table.refresh()
    out.update(
        snapshots=[str(s.snapshot_id) for s in table.metadata.snapshots],
        metadata_location=table.metadata_location,
        metadata_log=[e.metadata_file for e in table.metadata.metadata_log],
    )
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
