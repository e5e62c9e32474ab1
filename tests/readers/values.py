"""Turns Python/Arrow values into JSON both readers emit identically.

Integers stay JSON integers (the Node side parses them losslessly); decimals, dates, times,
timestamps and uuids become strings; bytes become base64; maps become [key, value] pairs.
"""
import base64
import datetime
import decimal
import math
import uuid


def plain(value):
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return {"float": str(value)}
        return value
    if isinstance(value, decimal.Decimal):
        return format(value, "f")
    if isinstance(value, datetime.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(datetime.timezone.utc)
        return value.isoformat(timespec="microseconds")
    if isinstance(value, datetime.time):
        return value.isoformat(timespec="microseconds")
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        # Arrow hands maps over as lists of (key, value) tuples.
        return [plain(v) for v in value]
    raise TypeError(f"no JSON form for {type(value).__name__}")
