"""The Java reference: reads a sink's table with Spark and Iceberg's own Spark runtime, and runs on
it the maintenance a table's owner runs with Spark.

usage: spark_table.py MODE NAMESPACE TABLE [MODE NAMESPACE TABLE ...]
  rows      the table's rows, in read_table.py's plain form (timestamps in UTC microseconds), so
            they compare as text with what PyIceberg and DuckDB read
  types     the schema as Spark sees it and as Iceberg's Java library holds it
  files     each live data file's record count and column metrics as Java decodes them (the
            `files` metadata table's readable_metrics: counts, lower and upper bounds), uuid
            columns left out
  maintain  rewrite_data_files (min-input-files 2), then expire_snapshots (older than now,
            retain_last 1); what each procedure returned
  partition_rows
            every row with the `_partition` tuple Java read for its file from the manifest
  partition_files
            each live data file's spec id, partition tuple and record count as Java reads
            them from the manifests (the `files` metadata table)
  lineage   every row's x with the row lineage Java reads for it (_row_id,
            _last_updated_sequence_number)
  java_types
            per column, whether Iceberg's Java generic reader (IcebergGenerics) gives the Java
            class the Iceberg spec maps the column's type to, for the first row holding a value
Prints one JSON line per step, in order: {"mode": ..., "namespace": ..., "table": ..., ...}.
Starting Spark takes tens of seconds, over a minute on a busy machine, so one call runs every step
it is given on one session.

Connection settings come from the environment as for the other readers (connections.py); the
Iceberg jars from .venv/spark-jars (scripts/ensure-install.mjs); Java from JAVA_HOME, else the
machine's OpenJDK 17, else `java` on PATH.
"""
import datetime
import json
import os
import shutil
import sys
import time
from pathlib import Path

from read_table import plain

CATALOG = "stack"
JARS = Path(sys.prefix) / "spark-jars"
OPENJDK_17 = "/usr/lib/jvm/java-17-openjdk-amd64"


def java_home():
    if os.environ.get("JAVA_HOME"):
        return os.environ["JAVA_HOME"]
    if os.path.isdir(OPENJDK_17):
        return OPENJDK_17
    java = shutil.which("java")
    if java is None:
        raise SystemExit("spark_table.py: no Java found (set JAVA_HOME, or install OpenJDK 17); Spark 3.5 needs Java 8, 11 or 17")
    return str(Path(java).resolve().parents[1])


def session():
    jars = sorted(JARS.glob("*.jar"))
    if len(jars) < 2:
        raise SystemExit(f"spark_table.py: the Iceberg jars are missing from {JARS}: run `node scripts/ensure-install.mjs`")
    # PySpark turns Spark timestamps into Python datetimes in the process's local zone: UTC makes
    # them the UTC wall clock read_table.py prints.
    os.environ["TZ"] = "UTC"
    time.tzset()
    os.environ["JAVA_HOME"] = java_home()
    # Loopback only: Spark would otherwise bind its driver to the machine's outward address.
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    from pyspark.sql import SparkSession

    env = os.environ
    cat = f"spark.sql.catalog.{CATALOG}"
    settings = {
        "spark.jars": ",".join(str(j) for j in jars),
        "spark.driver.memory": "768m",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.driver.host": "127.0.0.1",
        "spark.sql.shuffle.partitions": "2",
        "spark.sql.session.timeZone": "UTC",
        "spark.driver.extraJavaOptions": "-Duser.timezone=UTC",
        "spark.sql.extensions": "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
        cat: "org.apache.iceberg.spark.SparkCatalog",
        f"{cat}.type": "rest",
        f"{cat}.uri": env["ICEBERG_REST_URI"],
        f"{cat}.warehouse": env["ICEBERG_WAREHOUSE"],
        f"{cat}.credential": f"{env['AWS_ACCESS_KEY_ID']}:{env['AWS_SECRET_ACCESS_KEY']}",
        f"{cat}.io-impl": "org.apache.iceberg.aws.s3.S3FileIO",
        f"{cat}.s3.endpoint": env["AWS_ENDPOINT_URL"],
        f"{cat}.s3.path-style-access": "true",
        f"{cat}.s3.access-key-id": env["AWS_ACCESS_KEY_ID"],
        f"{cat}.s3.secret-access-key": env["AWS_SECRET_ACCESS_KEY"],
        f"{cat}.client.region": env["AWS_REGION"],
    }
    builder = SparkSession.builder.master("local[2]").appName("tablemere-reader")
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def rows(spark, name):
    return {"rows": [plain(row.asDict(recursive=True)) for row in spark.table(name).collect()]}


def java_schema(spark, name):
    return spark._jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(spark._jsparkSession, name).schema()


def types(spark, name):
    return {"spark": spark.table(name).schema.jsonValue(), "iceberg": java_schema(spark, name).toString()}


def files(spark, name):
    schema = java_schema(spark, name)
    columns = spark.table(f"{name}.files").schema["readable_metrics"].dataType.names
    # Iceberg 1.10's readable_metrics fails on a uuid column's bounds (apache/iceberg#13077):
    # those columns are left out.
    kept = [c for c in columns if schema.findType(c).typeId().toString() != "UUID"]
    metrics = ", ".join(f"readable_metrics.`{c}` AS `{c}`" for c in kept)
    found = spark.sql(f"SELECT file_path, record_count, struct({metrics}) AS readable_metrics FROM {name}.files").collect()
    return {"files": [plain(row.asDict(recursive=True)) for row in found]}


def maintain(spark, name):
    # The procedures name the table within the catalog they are called through.
    ident = name.removeprefix(f"{CATALOG}.")

    def call(sql):
        return [row.asDict() for row in spark.sql(sql).collect()]

    # Spark's session zone is UTC, so the literal is the current UTC time.
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")
    return {
        "rewrite_data_files": call(f"CALL {CATALOG}.system.rewrite_data_files(table => '{ident}', options => map('min-input-files', '2'))"),
        "expire_snapshots": call(f"CALL {CATALOG}.system.expire_snapshots(table => '{ident}', older_than => TIMESTAMP '{now}', retain_last => 1)"),
    }


def partition_rows(spark, name):
    found = spark.sql(f"SELECT *, _partition FROM {name}").collect()
    return {"rows": [plain(row.asDict(recursive=True)) for row in found]}


def partition_files(spark, name):
    found = spark.sql(f"SELECT file_path, spec_id, partition, record_count FROM {name}.files").collect()
    return {"partition_files": [plain(row.asDict(recursive=True)) for row in found]}


# The Java class of each Iceberg primitive as the spec's type table maps it (generic data model).
JAVA_CLASSES = {
    "BOOLEAN": "java.lang.Boolean",
    "INTEGER": "java.lang.Integer",
    "LONG": "java.lang.Long",
    "FLOAT": "java.lang.Float",
    "DOUBLE": "java.lang.Double",
    "DATE": "java.time.LocalDate",
    "TIME": "java.time.LocalTime",
    "STRING": "java.lang.CharSequence",
    "UUID": "java.util.UUID",
    "FIXED": "[B",
    "BINARY": "java.nio.ByteBuffer",
    "DECIMAL": "java.math.BigDecimal",
    "STRUCT": "org.apache.iceberg.StructLike",
    "LIST": "java.util.List",
    "MAP": "java.util.Map",
}


def java_types(spark, name):
    jvm = spark._jvm
    table = jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(spark._jsparkSession, name)
    columns = list(table.schema().columns())
    out = {}
    records = jvm.org.apache.iceberg.data.IcebergGenerics.read(table).build().iterator()
    pending = {c.name(): pos for pos, c in enumerate(columns)}
    while pending and records.hasNext():
        record = records.next()
        for column, pos in list(pending.items()):
            if record.get(pos) is None:
                continue
            type_id = columns[pos].type().typeId().toString()
            if type_id == "TIMESTAMP":
                expected = "java.time.OffsetDateTime" if columns[pos].type().shouldAdjustToUTC() else "java.time.LocalDateTime"
            else:
                expected = JAVA_CLASSES[type_id]
            # get(pos, class) casts in the JVM, so a wrong class fails there, whatever py4j makes of the value.
            try:
                record.get(pos, jvm.java.lang.Class.forName(expected))
                out[column] = {"type": columns[pos].type().toString(), "expected": expected, "ok": True}
            except Exception as error:  # py4j's Py4JJavaError carries the ClassCastException
                out[column] = {"type": columns[pos].type().toString(), "expected": expected, "ok": False, "error": str(error).splitlines()[-1][:300]}
            del pending[column]
    return {"java_types": out}


def lineage(spark, name):
    found = spark.sql(f"SELECT x, _row_id, _last_updated_sequence_number FROM {name}").collect()
    return {"rows": [plain(row.asDict(recursive=True)) for row in found]}


MODES = {"lineage": lineage, "rows": rows, "types": types, "files": files, "maintain": maintain, "partition_rows": partition_rows, "partition_files": partition_files, "java_types": java_types}


def main():
    args = sys.argv[1:]
    if not args or len(args) % 3 != 0:
        raise SystemExit(__doc__)
    steps = [tuple(args[i : i + 3]) for i in range(0, len(args), 3)]
    for mode, _, _ in steps:
        if mode not in MODES:
            raise SystemExit(f"unknown mode {mode}\n{__doc__}")
    spark = session()
    try:
        for mode, namespace, table in steps:
            out = MODES[mode](spark, f"{CATALOG}.{namespace}.{table}")
            print(json.dumps({"mode": mode, "namespace": namespace, "table": table, **out}), flush=True)
    finally:
        spark.stop()


if __name__ == "__main__":
    main()
