"""Sends one batch, and the same batch again, with a client generated from the API's OpenAPI
document by openapi-python-client, then asks for the batch's state with the generated client.

Usage: send_batch.py <client package dir> <api url> <sink id> <send key> <admin key> <batch id> <rows as JSON>
Prints one JSON object: each answer's status, headers that matter, and parsed body.
"""

import json
import sys

sys.path.insert(0, sys.argv[1])

from tablemere_client import AuthenticatedClient  # noqa: E402
from tablemere_client.api.send import send_batch  # noqa: E402
from tablemere_client.api.sinks import get_batch  # noqa: E402
from tablemere_client.models import BatchStatus, SendBatchItem, SendResult  # noqa: E402

api_url, sink_id, send_key, admin_key, batch_id, rows = sys.argv[2:9]
body = [SendBatchItem.from_dict(row) for row in json.loads(rows)]


def answer(response):
    parsed = response.parsed
    return {
        "status": int(response.status_code),
        "replayed": response.headers.get("idempotent-replayed"),
        "type": type(parsed).__name__,
        "body": parsed.to_dict() if parsed is not None else None,
    }


with AuthenticatedClient(base_url=api_url, token=send_key, raise_on_unexpected_status=True) as device:
    first = send_batch.sync_detailed(sink_id, client=device, body=body, idempotency_key=batch_id)
    again = send_batch.sync_detailed(sink_id, client=device, body=body, idempotency_key=batch_id)
    assert isinstance(first.parsed, SendResult), first.content

with AuthenticatedClient(base_url=api_url, token=admin_key, raise_on_unexpected_status=True) as owner:
    state = get_batch.sync_detailed(sink_id, batch_id, client=owner)
    assert isinstance(state.parsed, BatchStatus), state.content

print(json.dumps({"first": answer(first), "again": answer(again), "state": answer(state)}))
