"""The owner's engine creates a table, with PyIceberg.

usage: owner_create.py <namespace> <table> <format-version> <name>:<type> [<name>:<type> ...]
         types: long, string, timestamptz; every column optional. Prints {"format_version": ...}.
Settings come from the environment (connections.py).
"""
import json
import sys

from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType, TimestamptzType

from connections import catalog

TYPES = {"long": LongType(), "string": StringType(), "timestamptz": TimestamptzType()}


def main():
    namespace, name, version, *columns = sys.argv[1:]
    fields = []
    for i, column in enumerate(columns, start=1):
        column_name, type_name = column.split(":")
        fields.append(NestedField(i, column_name, TYPES[type_name], required=False))
    cat = catalog()
    cat.create_namespace_if_not_exists(namespace)
    table = cat.create_table((namespace, name), schema=Schema(*fields), properties={"format-version": version})
    json.dump({"format_version": table.metadata.format_version}, sys.stdout)


if __name__ == "__main__":
    main()
