"""Trials through the SDK (ARCHITECTURE.md §22): one command run once per
shape, each an on-demand lease, against `gpuex demo`, whose eu-west has four
H100s in MIG mode. The simulated backend stands a slice's GPU memory in with
an address-space limit on the workload, which the process launcher applies
and the container launcher cannot (and the demo's busybox image has no
python3): where the session's demo runs containers, this module starts a
demo of its own with the process launcher."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from decimal import Decimal

import pytest

from gpuex import ApiError, Gpuex
from gpuex_api.models import Mode, RunState, SmallestPassed, TrialRun, TrialState, TrialView

from .conftest import BUYER, LAUNCHER, demo

# Maps 12 GB it never touches: more than a 1g.10gb slice, less than 3g.40gb.
MAPS_12_GB = "python3 -c 'import mmap; mmap.mmap(-1, 12 * 10**9)'"
H100 = "H100-SXM5-80GB"


@pytest.fixture(scope="module")
def trial_server(request: pytest.FixtureRequest) -> Iterator[str]:
    """A demo whose agents run workloads with the process launcher."""
    if LAUNCHER == "process":
        yield request.getfixturevalue("server")
        return
    with demo("process") as url:
        yield url


@pytest.fixture(scope="module")
def gx(trial_server: str) -> Gpuex:
    return Gpuex.login(trial_server, *BUYER)


@pytest.fixture(scope="module")
def finished(gx: Gpuex) -> TrialView:
    """The 12 GB workload tried on a 1g.10gb and a 3g.40gb slice, to the end."""
    started = gx.trial(
        {"command": MAPS_12_GB, "gpu_model": H100, "region": "eu-west",
         "shapes": ["mig-1g.10gb", "mig-3g.40gb"], "duration_s": 120}
    )
    assert isinstance(started, TrialView), started
    assert [r.shape for r in started.runs] == ["mig-1g.10gb", "mig-3g.40gb"], started
    return gx.wait_for_trial(started.id, timeout=180)


def _run(trial: TrialView, shape: str) -> TrialRun:
    return next(r for r in trial.runs if r.shape == shape)


def test_a_workload_larger_than_a_1g_slice_fails_there_and_passes_on_3g(gx: Gpuex, finished: TrialView) -> None:
    assert finished.state == TrialState.DONE, finished
    small = _run(finished, "mig-1g.10gb")
    assert small.state == RunState.FAILED, finished
    assert isinstance(small.exit_code, int) and small.exit_code != 0, finished
    assert small.placed == "mig 1g.10gb", finished
    mid = _run(finished, "mig-3g.40gb")
    assert (mid.state, mid.exit_code, mid.placed) == (RunState.PASSED, 0, "mig 3g.40gb"), finished
    # Each shape ran as an on-demand lease of its own.
    assert isinstance(small.lease_id, uuid.UUID) and isinstance(mid.lease_id, uuid.UUID), finished
    assert small.lease_id != mid.lease_id, finished
    assert gx.lease(mid.lease_id).mode == Mode.ON_DEMAND
    # The cheapest shape that passed, at its on-demand price.
    cheapest = finished.smallest_passed
    assert isinstance(cheapest, SmallestPassed), finished
    assert cheapest.shape == "mig-3g.40gb", finished
    assert isinstance(mid.price_per_hour, str), finished
    assert Decimal(cheapest.price_per_hour) == Decimal(mid.price_per_hour), finished
    # get_trial answers the same.
    again = gx.get_trial(str(finished.id))
    assert again.id == finished.id and again.state == TrialState.DONE, again
    assert isinstance(again.smallest_passed, SmallestPassed) and again.smallest_passed.shape == "mig-3g.40gb", again


def test_trials_lists_it_newest_first(gx: Gpuex, finished: TrialView) -> None:
    listed = gx.trials()
    assert finished.id in [t.id for t in listed], listed
    created = [t.created_at for t in listed]
    assert created == sorted(created, reverse=True), created


def test_a_bad_shape_raises_422_naming_it_and_an_unknown_trial_404(gx: Gpuex) -> None:
    before = len(gx.trials())
    with pytest.raises(ApiError) as refused:
        gx.trial({"command": "true", "gpu_model": H100, "shapes": ["half"]})
    assert refused.value.status == 422, refused.value
    assert "shapes[0]" in [field for field, _ in refused.value.errors], refused.value
    assert len(gx.trials()) == before
    with pytest.raises(ApiError) as missing:
        gx.get_trial(uuid.uuid4())
    assert missing.value.status == 404, missing.value


def test_a_trial_is_started_once_per_idempotency_key_and_waiting_times_out(gx: Gpuex) -> None:
    request = {"command": "sleep 600", "gpu_model": H100, "region": "eu-west", "shapes": ["mig-1g.10gb"],
               "duration_s": 60}
    key = str(uuid.uuid4())
    first = gx.trial(request, idempotency_key=key)
    assert gx.trial(request, idempotency_key=key).id == first.id
    with pytest.raises(TimeoutError, match=str(first.id)):
        gx.wait_for_trial(first.id, timeout=1, poll=0.2)
