"""The PyIceberg twin of the append benchmark: the same NDJSON appended with
pyarrow.json.read_json + Table.append, timed the same way.

usage: append_pyiceberg.py <ndjson file> <namespace> <table>
Connection settings come from the environment (tests/readers/connections.py).
Prints one JSON object: rows, seconds, cpu_seconds, peak_rss_bytes, phases (seconds each).
"""
import json
import os
import resource
import sys
import time

import pyarrow.json as pj

# The readers' connection to the stack (tests/readers/connections.py), configured the same way.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "readers"))
import connections  # noqa: E402


def main():
    path, namespace, name = sys.argv[1:4]
    catalog = connections.catalog("bench")
    cpu_started = cpu_seconds()
    started = time.perf_counter()
    mark = started
    phases = {}

    def phase(label):
        nonlocal mark
        now = time.perf_counter()
        phases[label] = now - mark
        mark = now

    table = catalog.load_table((namespace, name))
    schema = table.schema().as_arrow()
    phase("load")
    data = pj.read_json(path, parse_options=pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore"))
    phase("read+convert")
    # Parquet (zstd), upload, manifest and commit: PyIceberg does them in one call.
    table.append(data.cast(schema))
    phase("parquet+put+commit")
    seconds = time.perf_counter() - started
    cpu = cpu_seconds() - cpu_started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    json.dump({"rows": data.num_rows, "seconds": seconds, "cpu_seconds": cpu, "peak_rss_bytes": peak, "phases": phases}, sys.stdout)


def cpu_seconds():
    """CPU time of all the process's threads (Arrow parses with several)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


if __name__ == "__main__":
    main()
