"""The owner's schema changes of bench:upkeep --schema-changes, made with PyIceberg on each table named.

usage: schema_change.py <change> <namespace.table> ...
  add:<name>          a top-level optional column (a struct<lat: double> when <name> is pos, else a string)
  add:pos.<name>      an optional long nested in pos
  rename:<old>:<new>  a column renamed (its field id kept)
  promote:<name>      int → long, float → double
  drop:<name>         a column deleted
Settings come from the environment (tests/readers/connections.py).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tests", "readers"))
from connections import catalog  # noqa: E402
from pyiceberg.types import DoubleType, IntegerType, LongType, NestedField, StringType, StructType  # noqa: E402


def change(update, schema, kind, args):
    if kind == "add" and args[0] == "pos":
        update.add_column("pos", StructType(NestedField(1, "lat", DoubleType(), required=False)))
    elif kind == "add" and args[0].startswith("pos."):
        update.add_column(("pos", args[0][4:]), LongType())
    elif kind == "add":
        update.add_column(args[0], StringType())
    elif kind == "rename":
        update.rename_column(args[0], args[1])
    elif kind == "promote":
        wider = LongType() if isinstance(schema.find_field(args[0]).field_type, IntegerType) else DoubleType()
        update.update_column(args[0], wider)
    elif kind == "drop":
        update.delete_column(args[0])
    else:
        raise SystemExit(f"unknown change {kind}")


def main():
    kind, *args = sys.argv[1].split(":")
    for name in sys.argv[2:]:
        table = catalog().load_table(tuple(name.split(".", 1)))
        with table.update_schema() as update:
            change(update, table.schema(), kind, args)


if __name__ == "__main__":
    main()
