"""Order types through the SDK, against `gpuex demo` (ARCHITECTURE.md §22):
`count` units placed together (`all_or_none`), fill-or-kill refused whole,
the quote's `units`, `lease_ids`, and the order's type on each fill. The
demo's eu-west has four whole H100s (tests/api/order_types.rs has the rest)."""

from __future__ import annotations

import datetime
import uuid
from decimal import Decimal

import pytest

from gpuex import ApiError, Gpuex
from gpuex_api.api.orders import cancel_order as cancel_order_op
from gpuex_api.models import (
    FillView,
    LeaseView,
    Mode,
    OrderRequest,
    OrderView,
    Resources,
    TimeInForce,
    UnitsQuote,
)
from gpuex_api.types import UNSET

from .conftest import BUYER

WORKLOAD = "echo gang-unit; sleep 600"


def whole_h100(**extra: object) -> dict[str, object]:
    """A whole H100 in eu-west, on demand."""
    return {
        "mode": "on_demand",
        "region": "eu-west",
        "resources": {"tflops": 900, "vram_gb": 80, "gpu_model": "H100-SXM5-80GB"},
        **extra,
    }


def _snapshot(gx: Gpuex) -> tuple[set[uuid.UUID], set[uuid.UUID]]:
    """The buyer's order ids, and the ids of the orders its leases belong to."""
    return {o.id for o in gx.orders()}, {lease.order_id for lease in gx.leases()}


def test_a_gang_fills_whole_a_fok_that_does_not_fit_holds_nothing_and_the_quote_counts_units(server: str) -> None:
    gx = Gpuex.login(server, *BUYER)

    # The quote of 64 says how many fit now, and what those cost together.
    quote = gx.quote(whole_h100(count=64))
    assert isinstance(quote.units, UnitsQuote), quote
    assert quote.units.count == 64
    placeable = quote.units.placeable_now
    assert 2 <= placeable < 64, quote.units
    assert quote.slice_, quote
    one = Decimal(quote.slice_.price_per_hour)
    assert Decimal(quote.units.price_per_hour) == one * placeable, (quote.units, one)
    # Without count, no units.
    assert gx.quote(whole_h100()).units in (None, UNSET)

    # Fill-or-kill of more units than fit: refused whole, nothing leased (the
    # order is kept, rejected, with no lease).
    orders_before, _ = _snapshot(gx)
    with pytest.raises(ApiError) as refused:
        gx.place_order(whole_h100(count=64, time_in_force="fok", command=WORKLOAD))
    assert (refused.value.status, refused.value.code) == (422, "no_capacity"), refused.value
    orders_after, leased_after = _snapshot(gx)
    for new in orders_after - orders_before:
        kept = gx.order(new)
        assert (kept.state.value, kept.reject_reason, kept.lease_ids) == ("rejected", "no_capacity", []), kept
    # Leases filled meanwhile (the demo's own bids) are of orders placed before.
    assert leased_after <= orders_before, leased_after - orders_before

    # All-or-none of two, as a typed model: both placed, on two GPUs.
    body = OrderRequest.from_dict(whole_h100(command=WORKLOAD))
    body.count = 2
    body.all_or_none = True
    assert body.to_dict()["count"] == 2 and body.to_dict()["all_or_none"] is True
    gang = gx.place_order(body)
    assert isinstance(gang, OrderView)
    assert gang.state.value == "filled", gang
    assert len(gang.lease_ids) == 2 and len(set(gang.lease_ids)) == 2, gang.lease_ids
    legs = gx.order_leases(gang)
    assert [lease.id for lease in legs] == gang.lease_ids
    assert all(isinstance(lease, LeaseView) and lease.order_id == gang.id for lease in legs), legs
    gpus = [lease.placement.to_dict().get("gpus") for lease in legs]
    assert gpus[0] != gpus[1], gpus
    assert all(Decimal(lease.price_per_hour) == one for lease in legs), [lease.price_per_hour for lease in legs]
    # The read-back view agrees, by id too.
    assert gx.order(gang.id).lease_ids == gang.lease_ids
    assert [lease.id for lease in gx.order_leases(str(gang.id))] == gang.lease_ids

    # Each fill reports the order's type: no time in force given, nor a wait, is ioc.
    fills = gx.fills(gang.id)
    assert len(fills) == 2 and {f.lease_id for f in fills} == set(gang.lease_ids), fills
    for fill in fills:
        assert isinstance(fill, FillView)
        kind = fill.order_type
        assert (kind.count, kind.min_count) == (2, 2), kind
        assert kind.time_in_force == TimeInForce.IOC, kind
        assert kind.expires_at is None, kind

    for lease in legs:
        gx.release(lease.id)


def test_a_gtt_order_waits_until_its_time_and_order_type_fields_are_checked(server: str) -> None:
    gx = Gpuex.login(server, *BUYER)
    # A typed request with a datetime: good till ten minutes from now. All of
    # 64 never fits, so it waits holding nothing.
    expires_at = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(minutes=10)
    body = OrderRequest(
        mode=Mode.ON_DEMAND,
        region="eu-west",
        resources=Resources.from_dict(whole_h100()["resources"]),  # type: ignore[arg-type]
        count=64,
        all_or_none=True,
        time_in_force=TimeInForce.GTT,
        expires_at=expires_at,
    )
    waiting = gx.place_order(body)
    assert waiting.state.value == "open", waiting
    assert waiting.lease_ids == [] and gx.order_leases(waiting.id) == []
    assert gx.fills(waiting.id) == []
    cancelled = cancel_order_op.sync_detailed(waiting.id, client=gx.api)
    assert cancelled.status_code == 200, cancelled.content

    # Problems name the field, from a dict as from a model.
    for extra, field in [
        ({"time_in_force": "gtc", "max_wait_s": 60}, "max_wait_s"),
        ({"time_in_force": "gtt"}, "expires_at"),
        ({"time_in_force": "ioc", "expires_at": expires_at.isoformat()}, "expires_at"),
        ({"count": 65}, "count"),
        ({"count": 2, "all_or_none": True, "min_count": 1}, "min_count"),
        ({"count": 2, "min_count": 3}, "min_count"),
    ]:
        with pytest.raises(ApiError) as bad:
            gx.place_order(whole_h100(**extra))
        assert bad.value.status == 422 and field in [f for f, _ in bad.value.errors], (extra, bad.value)
    with pytest.raises(ApiError) as bad:
        gx.quote(whole_h100(count=65))
    assert bad.value.status == 422 and "count" in [f for f, _ in bad.value.errors], bad.value
