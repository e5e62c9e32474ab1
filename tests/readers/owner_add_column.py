"""The owner's engine adds a column to a table's schema, with PyIceberg.

usage: owner_add_column.py <namespace> <table> <path> <type>
         path: dotted (`device.fw` adds fw to the struct device); type: long, double, string,
         boolean or timestamptz. Prints {"schema_id": ..., "field_id": ...}.
Settings come from the environment (connections.py).
"""
import json
import sys

from pyiceberg.types import BooleanType, DoubleType, LongType, StringType, TimestamptzType

from connections import catalog

TYPES = {"long": LongType(), "double": DoubleType(), "string": StringType(), "boolean": BooleanType(), "timestamptz": TimestamptzType()}


def main():
    namespace, name, path, type_name = sys.argv[1:]
    table = catalog().load_table((namespace, name))
    with table.update_schema() as update:
        update.add_column(tuple(path.split(".")), TYPES[type_name])
    schema = table.refresh().schema()
    json.dump({"schema_id": schema.schema_id, "field_id": schema.find_field(path).field_id}, sys.stdout)


if __name__ == "__main__":
    main()
