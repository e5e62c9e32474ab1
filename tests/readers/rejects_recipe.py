"""Runs the rejects read recipe of GET /v1/connection (`sink_rejects`) for one sink, as its user
would: the DuckDB SQL on a connection with the store's S3 secret, and the Python (pyarrow) code
with the S3 keys in the environment. Prints one JSON object: both engines' rejected rows, each
as {batch_id, row (as sent, parsed), reason, field}.

usage: rejects_recipe.py RECIPE_JSON SINK_ID
S3 settings come from the environment (connections.py).
"""
import json
import sys

from connections import duckdb_connection


def main():
    recipe = json.loads(sys.argv[1])
    sink_id = sys.argv[2]
    sql = recipe["duckdb"].replace("{sink_id}", sink_id).rstrip(";")
    # The recipe's columns: batch_id, row (JSON, as text), row_base64, reason, field, ...
    rows = duckdb_connection().execute(sql).fetchall()
    duckdb_rows = [{"batch_id": r[0], "row": None if r[1] is None else json.loads(r[1]), "reason": r[3], "field": r[4]} for r in rows]
    scope = {}
    exec(recipe["python"].replace("{sink_id}", sink_id), scope)
    python_rows = [{"batch_id": r["batch_id"], "row": r["row"], "reason": r["reason"], "field": r["field"]} for r in scope["rejects"]]
    json.dump({"duckdb": duckdb_rows, "python": python_rows}, sys.stdout)


if __name__ == "__main__":
    main()
