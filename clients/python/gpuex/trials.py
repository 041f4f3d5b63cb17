"""Trials (``/v1/trials``): one command run once per shape (a MIG profile, a
soft share or a whole GPU), each as an on-demand lease, to learn the
smallest shape the workload passes on."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from gpuex_api.api.trials import create_trial as create_trial_op
from gpuex_api.api.trials import get_trial as get_trial_op
from gpuex_api.api.trials import list_trials as list_trials_op
from gpuex_api.client import AuthenticatedClient
from gpuex_api.models import RunState, TrialList, TrialRequest, TrialState, TrialView
from gpuex_api.types import Response

from .errors import _model, _ok

T = TypeVar("T")


class TrialsMixin:
    """The trial calls of :class:`gpuex.Gpuex`."""

    api: AuthenticatedClient

    if TYPE_CHECKING:

        def _retried(self, call: Callable[[], Response[Any]], kind: type[T], *, retry_5xx: bool = True) -> T: ...

    def trial(self, request: TrialRequest | dict[str, Any], *, idempotency_key: str | None = None) -> TrialView:
        """Starts a trial (``POST /v1/trials``) under an ``Idempotency-Key`` (a
        fresh one unless given): ``command`` is run once per shape of
        ``gpu_model`` in ``shapes`` (``mig-<profile>`` such as ``mig-1g.10gb``,
        ``shared-<thousandths>`` such as ``shared-250``, or ``whole``), each as
        an on-demand lease of at most ``duration_s`` (60 to 600 s, default 300)
        at the on-demand price; optional ``region``, ``image`` and ``env``.

        A transport error or a 5xx is retried with the same key, so a lost
        answer never starts the trial twice. A shape no node has is
        ``refused`` alone (its ``reason`` says why); a field the server
        refuses raises ``ApiError`` 422 naming it (``shapes[0]``, ...).
        Follow it with :meth:`wait_for_trial`.
        """
        body = _model(request, TrialRequest)
        key = idempotency_key or str(uuid.uuid4())
        return self._retried(
            lambda: create_trial_op.sync_detailed(client=self.api, body=body, idempotency_key=key), TrialView
        )

    def get_trial(self, trial_id: str | uuid.UUID) -> TrialView:
        """One of your trials: each shape's run (``state``: ``pending``,
        ``running``, ``passed``, ``failed`` or ``refused``; the slice it got,
        ``exit_code``, ``peak_vram_mb``, ``gpu_util_p50``, ``price_per_hour``)
        and ``smallest_passed``, the cheapest shape that passed (``None``
        while none has). Another caller's trial is 404, as a missing one."""
        return _ok(get_trial_op.sync_detailed(uuid.UUID(str(trial_id)), client=self.api), TrialView)

    def trials(self) -> list[TrialView]:
        """Your trials, newest first."""
        return _ok(list_trials_op.sync_detailed(client=self.api), TrialList).trials

    def wait_for_trial(self, trial_id: str | uuid.UUID, timeout: float = 900, poll: float = 1.0) -> TrialView:
        """Polls :meth:`get_trial` every ``poll`` seconds until the trial is
        ``done`` (every shape passed, failed or was refused) and answers it;
        raises ``TimeoutError`` when it is still running after ``timeout``
        seconds."""
        deadline = time.monotonic() + timeout
        while True:
            view = self.get_trial(trial_id)
            if view.state == TrialState.DONE:
                return view
            left = deadline - time.monotonic()
            if left <= 0:
                running = [r.shape for r in view.runs if r.state in (RunState.PENDING, RunState.RUNNING)]
                raise TimeoutError(f"trial {trial_id} is still running after {timeout} s (shapes {running})")
            time.sleep(min(poll, left))
