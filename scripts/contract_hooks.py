"""Schemathesis hooks for scripts/contract-check (loaded via SCHEMATHESIS_HOOKS).

Only rules that JSON Schema cannot state between two fields are applied
here, to the generated requests; every check still runs on every request.
"""
import re
from datetime import datetime, timezone

import uuid

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
def map_headers(ctx, headers):
    """A generated Idempotency-Key is made unique: the same key again replays
    the first answer (ARCHITECTURE.md §19), so a stateful sequence that created, then
    deleted, then "created" again with one key would be told of a resource
    that is gone, which is the header doing its job, not a defect."""
    if headers and "Idempotency-Key" in headers:
        headers["Idempotency-Key"] = str(uuid.uuid4())
    return headers


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


# Rules a schema-valid request can still break, by operation: the fields whose
# rule depends on another field or on what exists (a region, a catalog model,
# the caller's own node and leases, a window in the future), and the reason
# codes of refusals the market gives for its state. Decimal fields are here
# too: the schema gives their grammar, the server their range and scale.
# Only these operations may answer such a request 422 (contract-check.toml
# allows it), and only for these reasons: `refused_only_for_a_rule_the_schema_cannot_state`.
MARKET_CODES = {"insufficient_funds", "no_capacity", "below_floor", "reserved_too_soon",
                "unknown_model", "unknown_precision", "unsatisfiable_resources",
                "node_cordoned", "budget_exceeded",
                # No model that could hold the resources has a list price in
                # the region: the admin's price list, not the request.
                "no_price"}
# An Idempotency-Key already used with another body: a rule on what was sent
# before, which no schema of one request can state.
IDEMPOTENCY_CODES = {"idempotency_key_reused"}
ORDER_FIELDS = {"max_price", "start_at", "duration_s", "region", "max_wait_s",
                "resources.tflops", "resources.gpu_model", "resources.gpus",
                "resources.interconnect", "resources.isolation", "resources.precision"}
CROSS_FIELD_RULES = {
    # `webhook_url`: where its host resolves, and whether the account has a
    # signing secret yet.
    # `checkpoint` needs a `command`, `on_interrupt: resume` a `checkpoint`;
    # `checkpoint.path` may not be `.`/`..` parts or a system folder; two
    # artifacts may not share a path (a schema's `uniqueItems` compares
    # whole items, not one field of them); `registry_auth` needs an `image`.
    # Order types (ARCHITECTURE.md §22): `time_in_force` or `max_wait_s`,
    # not both; `expires_at` with `gtt` only, within 7 days of now;
    # `count` only on on-demand and pooled; `min_count` at most `count`,
    # never with `all_or_none`, all of it with `fok`.
    "POST /v1/orders": (ORDER_FIELDS | {"qos", "client_order_id", "webhook_url", "checkpoint",
                                        "checkpoint.path", "on_interrupt", "artifacts[*].path",
                                        "registry_auth", "time_in_force", "expires_at",
                                        "count", "min_count"},
                        MARKET_CODES | IDEMPOTENCY_CODES),
    # An output's name: no empty, `.` or `..` part.
    "PUT /v1/agent/assignments/{lease_id}/outputs/{name}": ({"path.name"}, set()),
    "POST /v1/quotes": (ORDER_FIELDS | {"count"}, MARKET_CODES),
    "POST /v1/admin/credits": ({"amount", "user_id"}, IDEMPOTENCY_CODES),
    "POST /v1/admin/billing/adjustments": ({"amount", "user_id", "lease_id", "period_end"},
                                           IDEMPOTENCY_CODES),
    "PUT /v1/admin/prices": ({"[*].list_price", "[*].region", "[*].gpu_model"}, set()),
    "PUT /v1/budgets": ({"monthly_limit"}, set()),
    "POST /v1/nodes": ({"region", "gpus[*].model", "gpus[*].mode", "gpus[*].memory_mib",
                        "gpus[*].index", "gpus[*].nvlink[*]", "gpus[*].mig_capable", "gpus"},
                       IDEMPOTENCY_CODES),
    "POST /v1/agent/heartbeat": ({"agent_id", "leases[*].lease_id",
                                  "gpus[*].processes[*].lease_id"}, set()),
    "POST /v1/agent/usage": ({"agent_id", "records[*].lease_id", "records[*].interval_start",
                              "records[*].interval_end", "records[*].tflops_s",
                              "records[*].vram_gb_s", "records[*].mean_utilization",
                              "records[*].peak_memory_mb"}, set()),
    # A URL is refused by where its host resolves (loopback, private).
    "POST /v1/webhooks": ({"url"}, IDEMPOTENCY_CODES),
    # `from` before `to`, and at most 1,000 intervals between them.
    "GET /v1/market/history": ({"query.from"}, set()),
    # A job-history file is the body: whether it is a `sacct`, pod list or
    # CSV file is its content, which no schema states; `gpu_model` must be
    # in the catalog.
    "POST /v1/profile/imports": ({"body", "query.gpu_model"}, IDEMPOTENCY_CODES),
    # A trial's shapes are names of the model's MIG profiles, shares or
    # `whole`, each once; `gpu_model` a catalog name; `env` as on an order.
    "POST /v1/trials": ({"gpu_model", "shapes", "shapes[*]", "image", "region"},
                        IDEMPOTENCY_CODES),
    # An import's profile covers the import's whole window: `import_id` takes
    # no `from` or `to`.
    "GET /v1/billing/profile": ({"query.import_id", "query.to"}, set()),
    # `profile` or `import_id`, not both; a profile's mean and baseline
    # within its peak; a catalog model and a region with its prices; the
    # caller's history when neither is given; decimals' range and scale.
    "POST /v1/tco": ({"import_id", "profile", "profile.spot_share", "gpu_model", "region",
                      "utilization", "node_price_per_hour", "months"}
                     | {f"profile.{unit}.{field}" for unit in ("tflops_units", "vram_units")
                        for field in ("peak", "mean", "baseline", "mean_above_baseline")},
                     set()),
    "POST /v1/agent/register": ({"gpus[*].model", "gpus[*].index", "gpus[*].mig_mode",
                                 "gpus[*].calibration_ratio", "gpus[*].nvlink_peers[*]",
                                 "gpus[*].mig_instances[*].profile", "gpus"}, set()),
}
# Reads over a window `[from, to)`: a `to` at or before `from` is refused
# naming `query.to`, which the check below allows only when the request's
# `from` and `to` really are in that order (the coverage phase does not run
# `map_query`).
WINDOWS = {"GET /v1/ledger", "GET /v1/billing/usage", "GET /v1/billing/export",
           "GET /v1/provider/earnings", "GET /v1/prices/history", "GET /v1/billing/invoices/{id}"}
for _op in WINDOWS:
    CROSS_FIELD_RULES[_op] = ({"query.to"}, set())


# Reads whose window defaults to this month (`billing::export::window_or_month`).
MONTH_WINDOWS = {"GET /v1/billing/usage", "GET /v1/billing/profile"}


def _default_from(operation):
    """Where a window starts when `from` is not given: this month's start for
    usage and the profile, the beginning of time (1970) for the others."""
    now = datetime.now(timezone.utc)
    if operation in MONTH_WINDOWS:
        return now.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    return datetime(1970, 1, 1, tzinfo=timezone.utc)


def _default_to(operation):
    """Where a window ends when `to` is not given: next month's start for
    usage and the profile, 8 × 2³¹ s after 1970 (year 2514) for the others (billing/export.rs)."""
    now = datetime.now(timezone.utc)
    if operation in MONTH_WINDOWS:
        first = now.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
        return first.replace(year=first.year + 1, month=1) if first.month == 12 \
            else first.replace(month=first.month + 1)
    return datetime.fromtimestamp((2**31 - 1) * 8, timezone.utc)


def _field_pattern(field):
    return re.sub(r"\[\d+\]", "[*]", field)


@schemathesis.check
def refused_only_for_a_rule_the_schema_cannot_state(ctx, response, case):
    """A schema-valid request answered 422 names only fields (or reason codes)
    whose rule the schema cannot state; anything else is a schema that says
    too little."""
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive or response.status_code != 422:
        return None
    rule = CROSS_FIELD_RULES.get(f"{case.method.upper()} {case.path}")
    if rule is None:
        return None  # positive_data_acceptance refuses the 422 itself.
    fields, codes = rule
    try:
        problem = response.json()
    except ValueError:
        raise AssertionError("a 422 that is not problem+json")
    if problem.get("code") in codes:
        return None
    named = {_field_pattern(e.get("field", "")) for e in problem.get("errors", [])}
    if "query.to" in named:
        query = case.query or {}
        start, end = _instant(query.get("from")), _instant(query.get("to"))
        operation = f"{case.method.upper()} {case.path}"
        if query.get("from") is None:
            start = _default_from(operation)
        if query.get("to") is None:
            end = _default_to(operation)
        # The server compares whole seconds (billing/export.rs `window`).
        if start is None or end is None or int(end.timestamp()) > int(start.timestamp()):
            raise AssertionError(f"`query.to` refused, yet from={query.get('from')!r} "
                                 f"comes before to={query.get('to')!r}")
    others = sorted(f for f in named if f not in fields)
    if problem.get("code") != "validation_error" or not named or others:
        raise AssertionError(
            f"a schema-valid request was refused for what the schema could state: "
            f"code {problem.get('code')!r}, fields {others or sorted(named)}")
    return None
