"""Schemathesis hooks for scripts/contract-check (loaded via SCHEMATHESIS_HOOKS).

Only rules that JSON Schema cannot state between two fields are applied
here, to the generated requests; every check still runs on every request.
"""
import re
from datetime import datetime

import schemathesis

_STAMP = re.compile(r"^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})$")


def _instant(text):
    """An RFC 3339 time as a comparable datetime, or None."""
    match = _STAMP.match(text) if isinstance(text, str) else None
    if not match:
        return None
    fraction = (match.group(2) or ".0")[:7]
    zone = "+00:00" if match.group(3) == "Z" else match.group(3)
    try:
        return datetime.fromisoformat(match.group(1) + fraction + zone)
    except ValueError:
        return None


@schemathesis.hook
def map_query(ctx, query):
    # `from` and `to` bound a window, and the server refuses a `to` at or
    # before `from` with 422 naming `query.to` (tests/api/billing.rs and
    # wallet.rs hold it to that). A schema-valid pair in that order is not a
    # request the server must accept, so the pair is put in order.
    if not isinstance(query, dict):
        return query
    start, end = _instant(query.get("from")), _instant(query.get("to"))
    if start is not None and end is not None and end <= start:
        if end == start:
            del query["to"]
        else:
            query["from"], query["to"] = query["to"], query["from"]
    return query
