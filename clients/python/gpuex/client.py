"""The hand-written layer over the generated client (``gpuex_api``)."""

from __future__ import annotations

import datetime
import decimal
import hashlib
import json
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

import httpx
from gpuex_api.api.auth import login as login_op
from gpuex_api.api.auth import logout as logout_op
from gpuex_api.api.auth import me as me_op
from gpuex_api.api.auth import refresh as refresh_op
from gpuex_api.api.auth import set_role as set_role_op
from gpuex_api.api.billing import profile as profile_op
from gpuex_api.api.billing import tco as tco_op
from gpuex_api.api.billing import usage as usage_op
from gpuex_api.api.events import create_webhook as create_webhook_op
from gpuex_api.api.events import events_page as events_page_op
from gpuex_api.api.leases import convert_lease as convert_op
from gpuex_api.api.leases import get_lease as get_lease_op
from gpuex_api.api.leases import lease_logs as lease_logs_op
from gpuex_api.api.leases import list_leases as list_leases_op
from gpuex_api.api.leases import list_outputs as list_outputs_op
from gpuex_api.api.leases import release_lease as release_op
from gpuex_api.api.nodes import delete_node as delete_node_op
from gpuex_api.api.ops import list_replicas as list_replicas_op
from gpuex_api.api.orders import get_order as get_order_op
from gpuex_api.api.orders import list_orders as list_orders_op
from gpuex_api.api.orders import order_fills as order_fills_op
from gpuex_api.api.orders import place_order as place_order_op
from gpuex_api.api.prices import quote as quote_op
from gpuex_api.api.resale import create_listing as create_listing_op
from gpuex_api.api.resale import list_listings as list_listings_op
from gpuex_api.client import AuthenticatedClient, Client
from gpuex_api.models import (
    AccountRole,
    CapacityProfile,
    ConvertRequest,
    CreatedWebhook,
    EventPage,
    FillView,
    LeaseLogs,
    LeaseOutputs,
    LeaseView,
    ListingRequest,
    ListingView,
    LoginRequest,
    NewWebhook,
    OrderRequest,
    OrderView,
    Problem,
    Quote,
    QuoteRequest,
    RefreshRequest,
    ReplicaView,
    SetRoleRequest,
    StoredEvent,
    Tco,
    TcoRequest,
    TokenResponse,
    UsageReport,
    UserView,
)
from gpuex_api.types import UNSET, Response, Unset

from .errors import ApiError, _model, _ok, _raw_error
from .imports import ImportsMixin
from .trials import TrialsMixin

T = TypeVar("T")


class Gpuex(ImportsMixin, TrialsMixin):
    """A caller of one gpuex server.

    >>> gx = Gpuex.login("http://127.0.0.1:8080", "buyer@gpuex.demo", "demo-buyer-password")
    >>> order = gx.place_order({"mode": "on_demand", "resources": {"tflops": 100, "vram_gb": 8}})

    ``api`` is the generated, authenticated client, for every endpoint this
    layer does not wrap: ``gpuex_api.api.<tag>.<operation>.sync(client=gx.api, ...)``.
    """

    #: Refresh this long before the access token expires.
    REFRESH_MARGIN = datetime.timedelta(seconds=30)

    def __init__(self, server: str, token: str, *, timeout_s: float = 30.0, retries: int = 3):
        self.server = server.rstrip("/")
        self.retries = retries
        self.timeout_s = timeout_s
        #: The highest ``Gpuex-Seq`` a write was answered with; every later
        #: request sends it as ``Gpuex-Min-Seq``, so whichever replica answers
        #: shows this caller its own writes.
        self.seen_seq = 0
        self._api = self._client(token)
        #: The session's refresh token (after :meth:`login`); each works once.
        self.refresh_token: str | None = None
        self.expires_at: datetime.datetime | None = None

    def _client(self, token: str) -> AuthenticatedClient:
        return AuthenticatedClient(
            base_url=self.server,
            token=token,
            timeout=httpx.Timeout(self.timeout_s),
            raise_on_unexpected_status=False,
            httpx_args={"event_hooks": {"request": [self._ask_for_seen], "response": [self._see_seq]}},
        )

    def _ask_for_seen(self, request: httpx.Request) -> None:
        if self.seen_seq > 0:
            request.headers["Gpuex-Min-Seq"] = str(self.seen_seq)

    def _see_seq(self, response: httpx.Response) -> None:
        seq = response.headers.get("Gpuex-Seq")
        if seq is not None and seq.isdigit():
            self.seen_seq = max(self.seen_seq, int(seq))

    @property
    def api(self) -> AuthenticatedClient:
        """The generated client, with an access token refreshed when it is about to expire."""
        now = datetime.datetime.now(datetime.timezone.utc)
        if self.refresh_token and self.expires_at and self.expires_at - self.REFRESH_MARGIN <= now:
            self.refresh()
        return self._api

    @classmethod
    def login(cls, server: str, email: str, password: str, **kwargs: Any) -> Gpuex:
        """Opens a session: a short-lived access token, refreshed transparently with
        the rotating refresh token (or use an API key with the constructor)."""
        anonymous = Client(base_url=server.rstrip("/"))
        tokens = _ok(
            login_op.sync_detailed(client=anonymous, body=LoginRequest(email=email, password=password)), TokenResponse
        )
        gx = cls(server, tokens.access_token, **kwargs)
        gx._keep(tokens)
        return gx

    def _keep(self, tokens: TokenResponse) -> None:
        self._api = self._client(tokens.access_token)
        self.refresh_token = tokens.refresh_token
        self.expires_at = tokens.expires_at

    def refresh(self) -> None:
        """Swaps the refresh token for a new pair now. A refresh token works once:
        using a used one again revokes the whole session (401 from then on)."""
        if not self.refresh_token:
            raise ValueError("no session to refresh: log in with Gpuex.login")
        anonymous = Client(base_url=self.server)
        tokens = refresh_op.sync_detailed(client=anonymous, body=RefreshRequest(refresh_token=self.refresh_token))
        self._keep(_ok(tokens, TokenResponse))

    def logout(self) -> None:
        """Ends the session on the server: its refresh and access tokens stop working."""
        if not self.refresh_token:
            return
        anonymous = Client(base_url=self.server, raise_on_unexpected_status=False)
        response = logout_op.sync_detailed(client=anonymous, body=RefreshRequest(refresh_token=self.refresh_token))
        if int(response.status_code) != 204:
            raise ApiError.from_response(response)
        self.refresh_token = None
        self.expires_at = None

    def delete_node(self, node_id: str | uuid.UUID, *, force: bool = False) -> None:
        """Deletes one of your nodes (providers; admins any): its token stops working
        at once. A node with live leases is refused (409 ``node_has_leases``) unless
        ``force``, which ends them as on node loss."""
        response = delete_node_op.sync_detailed(node_id, client=self.api, force=force)
        if int(response.status_code) != 204:
            raise ApiError.from_response(response)

    def set_role(self, user_id: str | uuid.UUID, role: str) -> UserView:
        """Gives an account another role (admins): ``buyer``, ``provider`` or ``admin``.
        Its sessions and API keys stop working; one made a buyer loses its node tokens."""
        try:
            body = SetRoleRequest(role=AccountRole(role))
        except ValueError:
            # Not a role this SDK knows: the server says what is wrong with it.
            response = self.api.get_httpx_client().put(f"/v1/admin/users/{user_id}/role", json={"role": role})
            if not response.is_success:
                raise _raw_error(response) from None
            return UserView.from_dict(response.json())
        return _ok(set_role_op.sync_detailed(user_id, client=self.api, body=body), UserView)

    def set_node(
        self,
        node_id: str | uuid.UUID,
        *,
        simulated: bool | None = None,
        accept_review: bool = False,
    ) -> dict[str, Any]:
        """What only an admin decides about a node (``PUT /v1/admin/nodes/{id}``):
        ``simulated=True`` lets its agent register with the simulated backend
        (refused, 403 ``simulated_backend_refused``, on any other node);
        ``accept_review=True`` ends a review (a re-inventory that changed its models
        or GPU count), so the node takes new placements again. Answers the node
        (``simulated``, ``under_review``, ``review_reason``, ``cordoned``, ...)."""
        body: dict[str, Any] = {}
        if simulated is not None:
            body["simulated"] = simulated
        if accept_review:
            body["review"] = "accept"
        response = self.api.get_httpx_client().put(f"/v1/admin/nodes/{node_id}", json=body)
        if not response.is_success:
            raise _raw_error(response)
        node: dict[str, Any] = response.json()
        return node

    def replicas(self) -> list[ReplicaView]:
        """The replicas serving the market (admins), the leader first: each one's
        ``role``, ``epoch``, how far its engine has applied the journal
        (``applied_seq``, ``lag_ms``), when it last said so (``seen_at``, ``silent``
        past 10 s) and whether it is the one that ``answering`` this call."""
        response = list_replicas_op.sync_detailed(client=self.api)
        if int(response.status_code) == 200 and isinstance(response.parsed, list):
            return response.parsed
        raise ApiError.from_response(response)

    def me(self) -> UserView:
        return _ok(me_op.sync_detailed(client=self.api), UserView)

    def quote(self, request: QuoteRequest | dict[str, Any]) -> Quote:
        """What ``request`` would cost. ``quote.slice`` prices the slice the order
        would hold (a MIG profile or whole GPU holds, and is charged for, more
        than asked); ``quote.options`` price the units asked on each model, to
        compare models. :meth:`held_price` reads the first. With ``count``
        (identical units, as on the order) ``quote.units`` says how many free
        capacity holds now (``placeable_now``) and what those cost per hour together."""
        return _ok(quote_op.sync_detailed(client=self.api, body=_model(request, QuoteRequest)), Quote)

    def held_price(self, request: QuoteRequest | dict[str, Any]) -> decimal.Decimal:
        """The price per hour an order like ``request`` would be filled at now:
        the quoted slice's, for the units it would hold, exactly the lease's
        ``price_per_hour`` when nothing changes in between. Raises ``ApiError``
        (409, the reason code) when no slice is free to price."""
        quote = self.quote(request)
        held = quote.slice_
        if held is None or isinstance(held, Unset):
            reason = quote.slice_unavailable if isinstance(quote.slice_unavailable, str) else "no_capacity"
            raise ApiError(409, f"no slice is free to price: {reason}", reason)
        return decimal.Decimal(held.price_per_hour)

    def place_order(self, request: OrderRequest | dict[str, Any], *, idempotency_key: str | None = None) -> OrderView:
        """Places an order under an ``Idempotency-Key`` (a fresh one unless given).

        A transport error or a 5xx is retried with the same key, so a lost
        answer never places the order twice: the server replays the first one.

        Order types are fields of the request: ``time_in_force`` (``gtc``,
        ``ioc``, ``fok``, or ``gtt`` with ``expires_at``, a timezone-aware
        datetime or RFC 3339 string; not with ``max_wait_s``) and ``count``
        identical units (on-demand and pooled), placed together with
        ``all_or_none`` or at least ``min_count``. An order of several units
        holds several leases: ``order.lease_ids``, or :meth:`order_leases`. A
        ``fok`` that does not fit whole raises ``ApiError`` (422, ``no_capacity``)
        and holds nothing.
        """
        body = _model(request, OrderRequest)
        key = idempotency_key or str(uuid.uuid4())
        return self._retried(
            lambda: place_order_op.sync_detailed(client=self.api, body=body, idempotency_key=key), OrderView
        )

    def order(self, order_id: str | uuid.UUID) -> OrderView:
        return _ok(get_order_op.sync_detailed(uuid.UUID(str(order_id)), client=self.api), OrderView)

    def order_leases(self, order: OrderView | str | uuid.UUID) -> list[LeaseView]:
        """The leases an order holds now, oldest first (its ``lease_ids``: several
        for an order of ``count`` units; once all have ended, those of its last
        fill). Read from the order's view (a fresh one when given an id)."""
        view = order if isinstance(order, OrderView) else self.order(order)
        return [self.lease(lease_id) for lease_id in view.lease_ids]

    def fills(self, order_id: str | uuid.UUID) -> list[FillView]:
        """An order's fills, oldest first: each lease it was filled with, why
        (``report``) and the order's type (``order_type``: ``time_in_force``,
        ``expires_at``, ``count``, ``min_count``)."""
        response = order_fills_op.sync_detailed(uuid.UUID(str(order_id)), client=self.api)
        if int(response.status_code) == 200 and isinstance(response.parsed, list):
            return response.parsed
        raise ApiError.from_response(response)

    def orders(self, **filters: Any) -> Iterator[OrderView]:
        """Every order (newest first), page after page; filters as ``list_orders`` takes them."""
        yield from self._pages(lambda cursor: list_orders_op.sync_detailed(client=self.api, cursor=cursor, **filters))

    def leases(self, **filters: Any) -> Iterator[LeaseView]:
        yield from self._pages(lambda cursor: list_leases_op.sync_detailed(client=self.api, cursor=cursor, **filters))

    def listings(self, **filters: Any) -> Iterator[ListingView]:
        yield from self._pages(
            lambda cursor: list_listings_op.sync_detailed(client=self.api, cursor=cursor, **filters)
        )

    def lease(self, lease_id: str | uuid.UUID) -> LeaseView:
        return _ok(get_lease_op.sync_detailed(uuid.UUID(str(lease_id)), client=self.api), LeaseView)

    def wait_for_lease(self, lease_id: str | uuid.UUID, state: str = "running", *, timeout_s: float = 120) -> LeaseView:
        """Polls until the lease reaches ``state``; raises TimeoutError, or ApiError 409 if it ended first."""
        deadline = time.monotonic() + timeout_s
        while True:
            lease = self.lease(lease_id)
            current = str(lease.state.value if hasattr(lease.state, "value") else lease.state)
            if current == state:
                return lease
            if current in ("ended", "failed") and state not in ("ended", "failed"):
                raise ApiError(409, f"lease {lease_id} is {current}", "lease_ended")
            if time.monotonic() > deadline:
                raise TimeoutError(f"lease {lease_id} is still {current} after {timeout_s} s")
            time.sleep(0.5)

    def logs(self, lease_id: str | uuid.UUID) -> LeaseLogs:
        return _ok(lease_logs_op.sync_detailed(uuid.UUID(str(lease_id)), client=self.api), LeaseLogs)

    def outputs(self, lease_id: str | uuid.UUID) -> LeaseOutputs:
        """What the lease's workload left in ``/outputs`` (name, size, sha256,
        when each expires), with the retention and storage price."""
        return _ok(list_outputs_op.sync_detailed(uuid.UUID(str(lease_id)), client=self.api), LeaseOutputs)

    def download_output(self, lease_id: str | uuid.UUID, name: str, path: str | Path) -> str:
        """Streams one output to ``path`` and returns its SHA-256, checked
        against the server's: a mismatch raises ApiError and leaves no file.
        Written to a ``.part`` file beside it first."""
        target = Path(path)
        part = target.with_suffix(target.suffix + ".part")
        digest = hashlib.sha256()
        url = f"/v1/leases/{uuid.UUID(str(lease_id))}/outputs/{quote(name, safe='')}"
        with self.api.get_httpx_client().stream("GET", url, timeout=httpx.Timeout(30.0, read=None)) as response:
            if response.status_code != 200:
                response.read()
                raise _raw_error(response)
            expected = response.headers.get("x-checksum-sha256")
            with part.open("wb") as out:
                for chunk in response.iter_bytes():
                    out.write(chunk)
                    digest.update(chunk)
        sha256 = digest.hexdigest()
        if expected is not None and expected != sha256:
            part.unlink(missing_ok=True)
            raise ApiError(502, f"{name} arrived with SHA-256 {sha256}, not {expected}", "checksum_mismatch")
        part.replace(target)
        return sha256

    def release(self, lease_id: str | uuid.UUID) -> LeaseView:
        return self._retried(
            lambda: release_op.sync_detailed(uuid.UUID(str(lease_id)), client=self.api), LeaseView, retry_5xx=False
        )

    def convert(
        self,
        lease_id: str | uuid.UUID,
        request: ConvertRequest | dict[str, Any],
        *,
        idempotency_key: str | None = None,
    ) -> LeaseView:
        """Converts a lease's mode under an ``Idempotency-Key``: a retry after
        a lost answer is replayed, never converted (and charged) twice."""
        lease = uuid.UUID(str(lease_id))
        body = _model(request, ConvertRequest)
        key = idempotency_key or str(uuid.uuid4())
        return self._retried(
            lambda: convert_op.sync_detailed(lease, client=self.api, body=body, idempotency_key=key), LeaseView
        )

    def vacate_at(self, lease: LeaseView | str | uuid.UUID) -> datetime.datetime | None:
        """When a lease listed for resale gives its slice up (its listing's
        ``from``), sold or not; ``None`` while it is not listed.

        ``ends_at`` stays the end of the window the seller still owes, so a
        script that plans on a listed lease asks this instead. Read from the
        lease's view (a fresh one when given an id).
        """
        view = lease if isinstance(lease, LeaseView) else self.lease(lease)
        value: Any = getattr(view, "vacate_at", UNSET)
        if isinstance(value, Unset):
            # A generated model older than the field keeps it as an extra property.
            value = view.additional_properties.get("vacate_at")
        if value is None or isinstance(value, datetime.datetime):
            return value
        return datetime.datetime.fromisoformat(str(value).replace("Z", "+00:00"))

    def resell(
        self, request: ListingRequest | dict[str, Any], *, idempotency_key: str | None = None
    ) -> ListingView:
        """Lists a reserved lease's tail for resale under an ``Idempotency-Key``
        (a retry is replayed, never listed twice)."""
        body = _model(request, ListingRequest)
        key = idempotency_key or str(uuid.uuid4())
        return self._retried(
            lambda: create_listing_op.sync_detailed(client=self.api, body=body, idempotency_key=key), ListingView
        )

    def usage(self, group_by: str = "mode", **window: Any) -> UsageReport:
        return _ok(usage_op.sync_detailed(client=self.api, group_by=group_by, **window), UsageReport)

    def profile(self, *, import_id: str | uuid.UUID | None = None, **window: Any) -> CapacityProfile:
        """The capacity profile over ``from_`` to ``to`` (datetimes; default this month),
        or with ``import_id`` that of one of your job-history imports (its whole
        window: not with ``from_`` or ``to``)."""
        if import_id is not None:
            window["import_id"] = uuid.UUID(str(import_id))
        return _ok(profile_op.sync_detailed(client=self.api, **window), CapacityProfile)

    def tco(self, request: TcoRequest | dict[str, Any], *, import_id: str | uuid.UUID | None = None) -> Tco:
        """Whole 8-GPU nodes against gpuex units, from the last 30 days, ``request["profile"]``
        or, with ``import_id`` (or ``request["import_id"]``), one of your job-history
        imports (:meth:`import_history`; ``assumptions.profile_source`` is then ``import``)."""
        body = _model(request, TcoRequest)
        if import_id is not None:
            # A copy: the caller's request is left as it was.
            body = TcoRequest.from_dict({**body.to_dict(), "import_id": str(uuid.UUID(str(import_id)))})
        return _ok(tco_op.sync_detailed(client=self.api, body=body), Tco)

    def create_webhook(
        self, request: NewWebhook | dict[str, Any], *, idempotency_key: str | None = None
    ) -> CreatedWebhook:
        """Creates a webhook under an ``Idempotency-Key``: a retry gets the
        first answer (its signing secret included), never a second webhook."""
        body = _model(request, NewWebhook)
        key = idempotency_key or str(uuid.uuid4())
        return self._retried(
            lambda: create_webhook_op.sync_detailed(client=self.api, body=body, idempotency_key=key), CreatedWebhook
        )

    def events_page(self, after: int | None = None, limit: int = 100) -> EventPage:
        return _ok(
            events_page_op.sync_detailed(client=self.api, after=UNSET if after is None else after, limit=limit),
            EventPage,
        )

    def events(self, after: int | None = None, *, follow: bool = True) -> Iterator[StoredEvent]:
        """The caller's events in order, as an iterator.

        With ``follow`` (the default) it reads the live SSE stream
        (``/v1/events/stream``) and reconnects after the last id seen when the
        connection drops, so no event is skipped; without, it reads the stored
        pages and stops at the end.
        """
        if not follow:
            while True:
                page = self.events_page(after)
                yield from page.items
                after = page.next_after
                if not page.has_more:
                    return
        last = after
        failures = 0
        while True:
            params = {} if last is None else {"after": last}
            try:
                with self.api.get_httpx_client().stream(
                    "GET",
                    "/v1/events/stream",
                    params=params,
                    headers={"Accept": "text/event-stream"},
                    timeout=httpx.Timeout(30.0, read=None),
                ) as response:
                    if response.status_code != 200:
                        response.read()
                        raise _raw_error(response)
                    failures = 0
                    for event in _sse(response.iter_lines()):
                        stored = StoredEvent.from_dict(json.loads(event))
                        last = stored.id
                        yield stored
            except (httpx.TransportError, httpx.RemoteProtocolError):
                failures += 1
                if failures > self.retries:
                    raise
            time.sleep(min(failures, 5))

    def export(
        self,
        path: str | Path,
        *,
        format: str = "focus-csv",
        progress: Callable[[int], None] | None = None,
        **window: str,
    ) -> int:
        """Streams an export (FOCUS CSV by default) to ``path``; returns the bytes written.

        ``progress`` is called with the running byte count. Written to a
        ``.part`` file beside it first, so a failure leaves no half file.
        """
        target = Path(path)
        part = target.with_suffix(target.suffix + ".part")
        written = 0
        with self.api.get_httpx_client().stream(
            "GET", "/v1/billing/export", params={"format": format, **window}, timeout=httpx.Timeout(30.0, read=None)
        ) as response:
            if response.status_code != 200:
                response.read()
                raise _raw_error(response)
            with part.open("wb") as out:
                for chunk in response.iter_bytes():
                    out.write(chunk)
                    written += len(chunk)
                    if progress:
                        progress(written)
        part.replace(target)
        return written

    def _retried(self, call: Callable[[], Response[Any]], kind: type[T], *, retry_5xx: bool = True) -> T:
        attempt = 0
        while True:
            attempt += 1
            try:
                response = call()
            except httpx.TransportError:
                if attempt >= self.retries:
                    raise
            else:
                if not (retry_5xx and int(response.status_code) >= 500 and attempt < self.retries):
                    return _ok(response, kind)
            time.sleep(0.3 * attempt)

    def _pages(self, fetch: Callable[[Any], Response[Any]]) -> Iterator[Any]:
        cursor: Any = UNSET
        while True:
            response = fetch(cursor)
            parsed = response.parsed
            if not (200 <= int(response.status_code) < 300) or isinstance(parsed, Problem) or parsed is None:
                raise ApiError.from_response(response)
            yield from parsed.items
            if isinstance(parsed.next_cursor, Unset) or parsed.next_cursor is None:
                return
            cursor = parsed.next_cursor


def _sse(lines: Iterator[str]) -> Iterator[str]:
    """The ``data`` of each server-sent event (comments and keep-alives skipped)."""
    data: list[str] = []
    for line in lines:
        if line == "":
            if data:
                yield "\n".join(data)
            data = []
        elif line.startswith(":"):
            continue
        else:
            field, _, value = line.partition(":")
            if field == "data":
                data.append(value[1:] if value.startswith(" ") else value)
