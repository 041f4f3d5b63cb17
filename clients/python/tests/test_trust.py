"""Sessions, node deletion and role changes through the SDK, against `gpuex demo`:
a refresh token works once, a reused one ends the session, logout ends it;
a deleted node's token and a demoted provider's node tokens stop working."""

from __future__ import annotations

import datetime
import uuid

import httpx
import pytest

from gpuex import ApiError, Gpuex
from gpuex_api.api.nodes import create_node as create_node_op

ADMIN = ("admin@gpuex.demo", "demo-admin-password")
PASSWORD = "correct horse battery"


def _account(server: str, role: str) -> tuple[str, str]:
    """Registers an account; answers (email, id)."""
    email = f"sdk-{role}-{uuid.uuid4().hex}@example.com"
    r = httpx.post(
        f"{server}/v1/auth/register",
        json={"email": email, "password": PASSWORD, "name": "SDK", "role": role},
        timeout=10,
    )
    assert r.status_code == 201, r.text
    return email, r.json()["id"]


def _node(gx: Gpuex) -> tuple[str, str]:
    """Creates a node; answers (id, token)."""
    from gpuex_api.models import CreateNodeRequest

    r = create_node_op.sync_detailed(client=gx.api, body=CreateNodeRequest(name="sdk-node", region="eu-west"))
    assert r.status_code == 201, r.content
    body = r.parsed
    return str(body.id), body.token


def _heartbeat_status(server: str, node_id: str, token: str) -> int:
    """What the node's agent gets for a heartbeat: 409 (register first) while
    its token works, 401 once it is revoked."""
    r = httpx.post(
        f"{server}/v1/agent/heartbeat",
        headers={"Authorization": f"Bearer {token}"},
        json={
            "agent_id": node_id,
            "sent_at": datetime.datetime.now(datetime.timezone.utc).isoformat(),
            "gpus": [],
            "leases": [],
        },
        timeout=10,
    )
    return r.status_code


def test_a_session_refreshes_itself_and_a_reused_refresh_token_ends_it(server: str) -> None:
    email, _ = _account(server, "buyer")
    gx = Gpuex.login(server, email, PASSWORD)
    first = gx.refresh_token
    assert first and first.startswith("gpr_")
    # The access token has (as far as the SDK knows) expired: the next call refreshes first.
    gx.expires_at = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(seconds=1)
    assert gx.me().email == email
    assert gx.refresh_token != first
    # A stolen copy of the first refresh token, used after its owner rotated it,
    # ends the whole session: the owner's tokens stop working too.
    thief = Gpuex(server, "unused")
    thief.refresh_token = first
    with pytest.raises(ApiError) as stolen:
        thief.refresh()
    assert stolen.value.status == 401
    with pytest.raises(ApiError) as owner:
        gx.me()
    assert owner.value.status == 401


def test_logout_ends_the_session_on_the_server(server: str) -> None:
    email, _ = _account(server, "buyer")
    gx = Gpuex.login(server, email, PASSWORD)
    token = gx.refresh_token
    gx.logout()
    with pytest.raises(ApiError) as e:
        gx.me()
    assert e.value.status == 401
    r = httpx.post(f"{server}/v1/auth/refresh", json={"refresh_token": token}, timeout=10)
    assert r.status_code == 401, r.text


def test_a_deleted_node_and_a_demoted_providers_nodes_lose_their_tokens(server: str) -> None:
    email, provider_id = _account(server, "provider")
    provider = Gpuex.login(server, email, PASSWORD)
    deleted_id, deleted_token = _node(provider)
    kept_id, kept_token = _node(provider)
    assert _heartbeat_status(server, deleted_id, deleted_token) == 409

    with pytest.raises(ApiError) as bad:
        provider.delete_node("not-a-uuid")
    # A malformed id names no node, as an unknown one: 404 `not_found`.
    assert (bad.value.status, bad.value.code) == (404, "not_found")
    provider.delete_node(deleted_id)
    provider.delete_node(deleted_id)  # a repeat answers the same
    assert _heartbeat_status(server, deleted_id, deleted_token) == 401

    admin = Gpuex.login(server, *ADMIN)
    with pytest.raises(ApiError) as bad_role:
        admin.set_role(provider_id, "agent")
    assert (bad_role.value.status, bad_role.value.errors[0][0]) == (422, "role")
    assert _heartbeat_status(server, kept_id, kept_token) == 409
    user = admin.set_role(provider_id, "buyer")
    assert (str(user.id), str(user.role)) == (provider_id, "buyer")
    assert _heartbeat_status(server, kept_id, kept_token) == 401
    with pytest.raises(ApiError) as ended:
        provider.me()
    assert ended.value.status == 401


def _register_simulated(server: str, token: str) -> httpx.Response:
    """The node's agent registers one simulated H100."""
    gpu = {"index": 0, "model": "H100-SXM5-80GB", "product_name": "H100", "uuid": "GPU-00000000-0000-0000-0000-000000000000",
           "memory_mib": 81559, "mig_capable": False, "mig_mode": None, "driver_version": "550.54.15", "cuda_version": "12.4"}
    return httpx.post(
        f"{server}/v1/agent/register",
        headers={"Authorization": f"Bearer {token}"},
        json={"agent_version": "0.1.0", "backend": "simulated", "hostname": "sdk",
              "host": {"cpu_milli": 64000, "memory_mib": 524288}, "gpus": [gpu]},
        timeout=10,
    )


def test_only_a_node_an_admin_marked_simulated_registers_the_simulated_backend(server: str) -> None:
    email, _ = _account(server, "provider")
    provider = Gpuex.login(server, email, PASSWORD)
    node_id, token = _node(provider)
    refused = _register_simulated(server, token)
    assert refused.status_code == 403, refused.text
    assert refused.json()["code"] == "simulated_backend_refused"

    with pytest.raises(ApiError) as not_admin:
        provider.set_node(node_id, simulated=True)
    assert not_admin.value.status == 403
    admin = Gpuex.login(server, *ADMIN)
    with pytest.raises(ApiError) as nothing:
        admin.set_node(node_id)
    assert (nothing.value.status, nothing.value.errors[0][0]) == (422, "simulated")
    node = admin.set_node(node_id, simulated=True)
    assert (node["simulated"], node["under_review"], node["review_reason"]) == (True, False, None)
    assert _register_simulated(server, token).status_code == 200
    # Accepting a review of a node not under review changes nothing.
    assert admin.set_node(node_id, accept_review=True)["under_review"] is False


def test_creating_calls_send_an_idempotency_key_so_a_retry_is_replayed(server: str) -> None:
    """A webhook created twice under one key is one webhook with one secret,
    and the same key with another body is refused: the SDK's create calls
    carry the key the server honours (DESIGN §19)."""
    email, _ = _account(server, "buyer")
    gx = Gpuex.login(server, email, PASSWORD)
    key = str(uuid.uuid4())
    url = "http://127.0.0.1:9/sdk-idempotent"
    first = gx.create_webhook({"url": url}, idempotency_key=key)
    again = gx.create_webhook({"url": url}, idempotency_key=key)
    assert (again.id, again.secret) == (first.id, first.secret)
    hooks = gx.api.get_httpx_client().get("/v1/webhooks")
    assert hooks.status_code == 200, hooks.text
    assert [h["id"] for h in hooks.json() if h["url"] == url] == [str(first.id)]
    with pytest.raises(ApiError) as refused:
        gx.create_webhook({"url": url + "-other"}, idempotency_key=key)
    assert refused.value.status == 422
    assert gx.create_webhook({"url": url}).id != first.id


def test_a_caller_reads_its_own_writes_by_asking_for_their_journal_row(server: str) -> None:
    """A write answers ``Gpuex-Seq``; the SDK sends the highest it saw as
    ``Gpuex-Min-Seq`` on every later request, so any replica answers with
    the write applied (a malformed one is refused, naming the header)."""
    gx = Gpuex.login(server, "buyer@gpuex.demo", "demo-buyer-password")
    assert gx.seen_seq == 0
    order = gx.place_order({"mode": "on_demand", "resources": {"tflops": 10, "vram_gb": 4}, "duration_s": 600})
    assert gx.seen_seq > 0
    asked: list[str | None] = []
    gx.api.get_httpx_client().event_hooks["request"].append(lambda r: asked.append(r.headers.get("Gpuex-Min-Seq")))
    assert gx.order(order.id).id == order.id
    assert asked == [str(gx.seen_seq)]
    ahead = httpx.get(f"{server}/readyz", headers={"Gpuex-Min-Seq": str(gx.seen_seq)}, timeout=10)
    assert ahead.status_code == 200 and ahead.json()["applied_seq"] >= gx.seen_seq
    bad = httpx.get(f"{server}/readyz", headers={"Gpuex-Min-Seq": "soon"}, timeout=10)
    assert bad.status_code == 400 and "Gpuex-Min-Seq" in bad.json()["detail"]


def test_an_admin_lists_the_replicas_and_a_buyer_may_not(server: str) -> None:
    admin = Gpuex.login(server, *ADMIN)
    replicas = admin.replicas()
    assert len(replicas) == 1
    (only,) = replicas
    assert only.role == "leader" and only.answering and not only.silent
    assert only.applied_seq >= 0 and only.lag_ms == 0
    buyer = Gpuex.login(server, "buyer@gpuex.demo", "demo-buyer-password")
    with pytest.raises(ApiError) as refused:
        buyer.replicas()
    assert refused.value.status == 403
