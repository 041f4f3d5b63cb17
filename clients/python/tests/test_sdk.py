"""The buyer's flow through the SDK only, against `gpuex demo`; and the
webhook verifier against a delivery the server really sent."""

from __future__ import annotations

import datetime
import hashlib
import http.server
import queue
import re
import threading
import time
import uuid
from decimal import Decimal
from pathlib import Path

import pytest

from gpuex import ApiError, Gpuex, WebhookSignatureError, verify_webhook
from gpuex_api.models import (
    LeaseView,
    OrderRequest,
    OrderView,
    ProfileImport,
    ProfileImportDetail,
    RegistryAuth,
    StoredEvent,
)

from .conftest import BUYER, LAUNCHER

WORKLOAD = "echo sdk-start; for i in 1 2 3; do echo tick $i; sleep 0.3; done; sleep 600"


def order_body(**extra: object) -> dict[str, object]:
    return {
        "mode": "on_demand",
        "region": "eu-west",
        "resources": {"tflops": 50, "vram_gb": 8},
        "command": WORKLOAD,
        "tags": {"team": "sdk"},
        **extra,
    }


def test_buyer_flow(server: str, tmp_path: Path) -> None:
    gx = Gpuex.login(server, *BUYER)
    assert gx.me().email == BUYER[0]

    quote = gx.quote({"mode": "on_demand", "region": "eu-west", "resources": {"tflops": 100, "vram_gb": 8}})
    assert quote.options, quote

    # An idempotency key on every retryable POST: the same key, the same order.
    key = str(uuid.uuid4())
    # MIG isolation asked for, so the slice is a MIG instance whatever else
    # the demo's market has placed meanwhile.
    mig = order_body(resources={"tflops": 50, "vram_gb": 8, "isolation": "mig"})
    order = gx.place_order(mig, idempotency_key=key)
    assert isinstance(order, OrderView)
    assert order.state.value == "filled", order
    again = gx.place_order(mig, idempotency_key=key)
    assert again.id == order.id

    lease = gx.wait_for_lease(str(order.lease_id), "running", timeout_s=60)
    assert isinstance(lease, LeaseView)
    assert lease.device and lease.device.startswith("MIG-"), lease.device
    # A command without an image runs in the provider's default image under
    # the container launcher (recorded by ID), and in none under processes.
    if LAUNCHER == "container":
        assert re.fullmatch(r"sha256:[0-9a-f]{64}", str(lease.image_id)), lease.image_id
    else:
        assert lease.image_id is None, lease.image_id
    deadline = time.monotonic() + 30
    while "tick 3" not in gx.logs(lease.id).tail:
        assert time.monotonic() < deadline, gx.logs(lease.id)
        time.sleep(0.5)
    assert "sdk-start" in gx.logs(lease.id).tail

    # Pagination: pages of one, every order still comes back, each once.
    paged = [o.id for o in gx.orders(limit=1)]
    assert len(paged) >= 2 and len(paged) == len(set(paged))
    assert order.id in paged
    assert [o.id for o in gx.orders(limit=100)] == paged
    assert any(item.id == lease.id for item in gx.leases(limit=2))

    released = gx.release(lease.id)
    assert released.id == lease.id
    with pytest.raises(ApiError) as refused:
        gx.release(lease.id)
    assert refused.value.status == 409

    # Problems come back as ApiError with the field named.
    with pytest.raises(ApiError) as bad:
        gx.quote({"mode": "on_demand", "resources": {"tflops": 0, "vram_gb": 8}})
    assert bad.value.status == 422
    assert any(field == "resources.tflops" for field, _ in bad.value.errors), bad.value

    # The event stream as an iterator: from the start, live, in id order,
    # until this order's fill comes by (it is stored, so it is replayed).
    mine: list[StoredEvent] = []
    last = 0
    for event in gx.events(after=0):
        assert isinstance(event, StoredEvent) and event.id > last
        last = event.id
        if event.order_id == order.id:
            mine.append(event)
            if event.type_.value == "order.filled":
                break
    assert [e.type_.value for e in mine][-1] == "order.filled"
    stored = [e.id for e in gx.events(after=0, follow=False)]
    assert stored == sorted(stored) and {e.id for e in mine} <= set(stored)

    # The FOCUS export, streamed to a file.
    seen: list[int] = []
    path = tmp_path / "focus.csv"
    written = gx.export(path, progress=seen.append)
    assert written > 0 and seen and seen[-1] == written
    assert path.read_text().startswith("BilledCost,")
    assert not (tmp_path / "focus.csv.part").exists()


def test_the_profile_and_tco(server: str) -> None:
    gx = Gpuex.login(server, *BUYER)
    profile = gx.profile()
    assert profile.total.key == "all"
    load = {"peak": "400", "mean": "200", "baseline": "100"}
    tco = gx.tco({"node_price_per_hour": "20", "months": 12, "profile": {"tflops_units": load, "vram_units": load}})
    assert tco.assumptions.profile_source.value == "body"
    assert tco.assumptions.months == 12
    modes = {line.mode.value for line in tco.gpuex.mix}
    assert modes == {"reserved", "on_demand"}, modes
    with pytest.raises(ApiError) as refused:
        gx.tco({"node_price_per_hour": "0", "profile": {"tflops_units": load, "vram_units": load}})
    assert ("node_price_per_hour" in [field for field, _ in refused.value.errors]), refused.value.errors


IMPORTS = Path(__file__).resolve().parents[3] / "data" / "imports"


def test_job_history_imports_become_profiles_the_tco_prices(server: str) -> None:
    """The repository's sample of each format, with the figures of
    tests/api/imports.rs: streamed from a path, an open file and bytes."""
    gx = Gpuex.login(server, *BUYER)

    # Slurm, from a path: jobs 1001, 1002 and 1007 taken; two steps of 1001,
    # the CPU-only 1003 and 1004 (never started) skipped; 1005 (still
    # running, line 8) and 1006 (hour 25, line 9) refused.
    sacct = gx.import_history(IMPORTS / "sacct.txt", "slurm")
    assert isinstance(sacct, ProfileImport)
    assert (sacct.format_.value, sacct.rows, sacct.skipped, sacct.rejected_count) == ("slurm", 3, 4, 2)
    assert [r.line for r in sacct.rejected] == [8, 9]
    assert "still running" in sacct.rejected[0].reason, sacct.rejected
    # 1007 names no GPU type: priced as the default model.
    assert (sacct.defaulted_model_rows, sacct.default_gpu_model) == (1, "H100-SXM5-80GB")
    assert sacct.from_ == datetime.datetime(2026, 11, 2, tzinfo=datetime.timezone.utc)
    assert sacct.to == datetime.datetime(2026, 11, 2, 5, tzinfo=datetime.timezone.utc)
    assert sacct.bytes_ == (IMPORTS / "sacct.txt").stat().st_size

    detail = gx.get_import(sacct.id)
    assert isinstance(detail, ProfileImportDetail) and detail.id == sacct.id and detail.rows == 3
    tflops = detail.profile.total.tflops_units
    # TFLOPS held: 624 (2 × A100) over 0–4 h, 3,956 (4 × H100) over 2–3 h,
    # 989 (1 × H100) over 1–5 h: levels 624, 1,613, 5,569, 1,613, 989.
    assert (Decimal(tflops.peak), Decimal(tflops.unit_hours), Decimal(tflops.mean)) == (
        Decimal("5569"), Decimal("10408"), Decimal("2081.6"))
    assert Decimal(tflops.baseline) == Decimal("1613")
    assert len(detail.concurrency) == 240
    assert Decimal(detail.concurrency[0].mean_gpus) == 2
    assert max(Decimal(point.peak_gpus) for point in detail.concurrency) == 7
    # The profile route answers the same profile.
    assert gx.profile(import_id=sacct.id).to_dict() == detail.profile.to_dict()

    # The TCO prices it, on the model it used most.
    tco = gx.tco({"node_price_per_hour": "20"}, import_id=sacct.id)
    assert tco.assumptions.profile_source.value == "import"
    assert tco.assumptions.import_id == sacct.id
    assert tco.assumptions.gpu_model == "H100-SXM5-80GB"
    assert Decimal(tco.assumptions.profile.tflops_units.peak) == Decimal("5569")
    assert tco.assumptions.history_from == sacct.from_
    # Or named in the request itself; never with a profile too.
    again = gx.tco({"node_price_per_hour": "20", "import_id": str(sacct.id)})
    assert again.assumptions.import_id == sacct.id
    load = {"peak": "1", "mean": "1"}
    with pytest.raises(ApiError) as both:
        gx.tco({"node_price_per_hour": "20", "profile": {"tflops_units": load, "vram_units": load}}, import_id=sacct.id)
    assert both.value.status == 422 and "import_id" in [field for field, _ in both.value.errors], both.value

    # Kubernetes, from an open file: train-0 and infer-0 taken; web (no GPU)
    # and queued-0 (never started) skipped; notebook-0, the 4th pod, running.
    with open(IMPORTS / "pods.json", "rb") as pods_file:
        pods = gx.import_history(pods_file, "k8s")
    assert (pods.format_.value, pods.rows, pods.skipped, pods.defaulted_model_rows) == ("k8s", 2, 2, 1)
    assert [r.line for r in pods.rejected] == [4]
    assert "notebook-0" in pods.rejected[0].reason, pods.rejected
    pods_tflops = gx.get_import(pods.id).profile.total.tflops_units
    assert (Decimal(pods_tflops.peak), Decimal(pods_tflops.unit_hours)) == (Decimal("1613"), Decimal("3226"))

    # The CSV, as bytes: an end before its start (line 4) and a start that is
    # no time (line 6) refused.
    csv = gx.import_history((IMPORTS / "jobs.csv").read_bytes(), "csv")
    assert (csv.format_.value, csv.rows, csv.skipped, csv.defaulted_model_rows) == ("csv", 3, 0, 0)
    assert [r.line for r in csv.rejected] == [4, 6]
    csv_tflops = gx.get_import(csv.id).profile.total.tflops_units
    assert (Decimal(csv_tflops.peak), Decimal(csv_tflops.unit_hours)) == (Decimal("8093"), Decimal("8717"))

    # Listed newest first; deleted, it is gone everywhere (404, as an id that never was).
    listed = gx.imports()
    assert {csv.id, pods.id, sacct.id} <= {i.id for i in listed}, listed
    created = [i.created_at for i in listed]
    assert created == sorted(created, reverse=True), created
    gx.delete_import(pods.id)
    assert pods.id not in [i.id for i in gx.imports()]
    for gone in (pods.id, uuid.uuid4()):
        with pytest.raises(ApiError) as missing:
            gx.get_import(gone)
        assert missing.value.status == 404, missing.value
    with pytest.raises(ApiError) as missing:
        gx.delete_import(pods.id)
    assert missing.value.status == 404
    with pytest.raises(ApiError) as missing:
        gx.profile(import_id=pods.id)
    assert missing.value.status == 404
    with pytest.raises(ApiError) as missing:
        gx.tco({"node_price_per_hour": "20"}, import_id=pods.id)
    assert missing.value.status == 404


def test_an_import_under_one_key_is_made_once_and_a_bad_file_is_refused(server: str) -> None:
    gx = Gpuex.login(server, *BUYER)
    key = str(uuid.uuid4())
    first = gx.import_history(IMPORTS / "jobs.csv", "csv", idempotency_key=key)
    # The same file under the same key (here as chunks of an iterator) answers the first import.
    chunks = iter([b"start,end,gpus,gpu_model,tag\n", (IMPORTS / "jobs.csv").read_bytes().split(b"\n", 1)[1]])
    again = gx.import_history(chunks, "csv", idempotency_key=key)
    assert again.to_dict() == first.to_dict()
    assert [i.id for i in gx.imports()].count(first.id) == 1
    # Another file under it is refused.
    with pytest.raises(ApiError) as reused:
        gx.import_history(IMPORTS / "sacct.txt", "slurm", idempotency_key=key)
    assert (reused.value.status, reused.value.code) == (422, "idempotency_key_reused")
    # Problems name the field: a file not of its format, an unknown format or model.
    with pytest.raises(ApiError) as bad:
        gx.import_history(b"no|header|here\n1|2|3\n", "slurm")
    assert bad.value.status == 422 and [f for f, _ in bad.value.errors] == ["body"], bad.value
    with pytest.raises(ApiError) as bad:
        gx.import_history(IMPORTS / "jobs.csv", "xml")
    assert bad.value.status == 422 and [f for f, _ in bad.value.errors] == ["query.format"], bad.value
    with pytest.raises(ApiError) as bad:
        gx.import_history(IMPORTS / "jobs.csv", "csv", gpu_model="GTX-1080")
    assert bad.value.status == 422 and [f for f, _ in bad.value.errors] == ["query.gpu_model"], bad.value
    # A model for rows naming none: the CSV names one on every row it takes.
    priced = gx.import_history(IMPORTS / "sacct.txt", "slurm", gpu_model="A100-SXM4-40GB")
    assert (priced.defaulted_model_rows, priced.default_gpu_model) == (1, "A100-SXM4-40GB")


class _Receiver(http.server.BaseHTTPRequestHandler):
    deliveries: queue.Queue[tuple[bytes, str]] = queue.Queue()

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.deliveries.put((body, self.headers.get("Gpuex-Signature", "")))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def test_the_verifier_accepts_a_real_delivery_and_refuses_a_forged_one(server: str) -> None:
    receiver = http.server.HTTPServer(("127.0.0.1", 0), _Receiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    try:
        gx = Gpuex.login(server, *BUYER)
        hook = gx.create_webhook({"url": f"http://127.0.0.1:{receiver.server_port}/hook"})
        assert hook.secret.startswith("whsec_")
        order = gx.place_order(order_body(command="true"))
        body, signature = _Receiver.deliveries.get(timeout=30)
        assert signature.startswith("t=")
        verify_webhook(body, signature, hook.secret)
        with pytest.raises(WebhookSignatureError):
            verify_webhook(body + b" ", signature, hook.secret)
        with pytest.raises(WebhookSignatureError):
            verify_webhook(body, signature, "whsec_" + "0" * 64)
        with pytest.raises(WebhookSignatureError):
            verify_webhook(body, signature, hook.secret, now=time.time() + 3600)
        gx.release(str(order.lease_id))
    finally:
        receiver.shutdown()


def test_a_listed_lease_says_when_it_vacates(server: str) -> None:
    gx = Gpuex.login(server, *BUYER)
    hour = 3600
    start = datetime.datetime.fromtimestamp((int(time.time()) // hour + 3) * hour, tz=datetime.timezone.utc)
    order = gx.place_order(
        {
            "mode": "reserved",
            "region": "eu-west",
            "start_at": start.isoformat(),
            "duration_s": 3 * hour,
            "resources": {"tflops": 50, "vram_gb": 8},
        }
    )
    assert order.state.value == "filled", order
    lease = gx.lease(str(order.lease_id))
    assert gx.vacate_at(lease) is None
    ask = (Decimal(lease.price_per_hour) * Decimal("0.8")).quantize(Decimal("0.000001"))
    listed_from = start + datetime.timedelta(hours=1)
    listing = gx.resell({"lease_id": str(lease.id), "from": listed_from.isoformat(), "ask_per_hour": str(ask)})
    assert listing.state == "open", listing
    # From the moment it is listed the lease says when it gives the slice up;
    # its window, still owed, ends where it did.
    assert gx.vacate_at(lease.id) == listed_from
    assert gx.lease(lease.id).ends_at == start + datetime.timedelta(hours=3)


def test_an_order_is_filled_at_its_held_price(server: str) -> None:
    """Issue 34 item 6: the quote prices the slice the order will hold (a MIG
    profile holds more than asked), and the fill is at exactly that price."""
    gx = Gpuex.login(server, *BUYER)
    body = order_body()
    quote = gx.quote({k: body[k] for k in ("mode", "region", "resources")})
    assert quote.slice_, quote
    held = gx.held_price({k: body[k] for k in ("mode", "region", "resources")})
    assert held == Decimal(quote.slice_.price_per_hour)
    order = gx.place_order(body)
    assert order.state.value == "filled", order
    lease = gx.lease(str(order.lease_id))
    assert Decimal(lease.price_per_hour) == held, (lease.price_per_hour, held)
    gx.release(lease.id)


def test_a_leases_outputs_are_listed_and_downloaded_with_their_sha256(server: str, tmp_path: Path) -> None:
    gx = Gpuex.login(server, *BUYER)
    body = order_body(command='printf "from the sdk\\n" > "$GPUEX_OUTPUTS/result.txt"; sleep 600')
    order = gx.place_order(body)
    lease = gx.wait_for_lease(str(order.lease_id), "running", timeout_s=60)
    gx.release(lease.id)
    # The agent sends the outputs a last time when the lease ends.
    deadline = time.monotonic() + 30
    while not gx.outputs(lease.id).outputs:
        assert time.monotonic() < deadline, "no outputs arrived"
        time.sleep(0.5)
    listed = gx.outputs(lease.id)
    [result] = listed.outputs
    expected = hashlib.sha256(b"from the sdk\n").hexdigest()
    assert (result.name, result.size, result.sha256) == ("result.txt", 13, expected)
    assert listed.retention_days == 30 and result.expires_at > result.stored_at
    target = tmp_path / "result.txt"
    assert gx.download_output(lease.id, "result.txt", target) == expected
    assert target.read_text() == "from the sdk\n"
    assert not (tmp_path / "result.txt.part").exists()
    with pytest.raises(ApiError) as missing:
        gx.download_output(lease.id, "nothing.txt", tmp_path / "nothing.txt")
    assert missing.value.status == 404
    assert not (tmp_path / "nothing.txt").exists()


def test_an_order_with_a_checkpoint_lists_its_attempts(server: str) -> None:
    gx = Gpuex.login(server, *BUYER)
    order = gx.place_order(order_body(checkpoint={"every_s": 30}, on_interrupt="resume"))
    fetched = gx.order(order.id)
    assert fetched.attempts == [order.lease_id]
    assert fetched.resumed_from is None
    gx.release(order.lease_id)
    with pytest.raises(ApiError) as refused:
        gx.place_order(order_body(on_interrupt="resume"))
    assert refused.value.status == 422
    assert any(field == "on_interrupt" for field, _ in refused.value.errors), refused.value


def test_registry_credentials_go_with_the_order_and_never_come_back(server: str) -> None:
    gx = Gpuex.login(server, *BUYER)
    secret = "sdk-registry-s3cret"
    auth = RegistryAuth(username="sdk-ci", password=secret)
    body = OrderRequest.from_dict(order_body(image="localhost/private/model:1", command="true"))
    body.registry_auth = auth
    order = gx.place_order(body)
    assert order.state.value == "filled", order
    shown = str(order.to_dict()) + str(gx.order(order.id).to_dict())
    assert secret not in shown and "registry_auth" not in shown, shown
    gx.release(order.lease_id)
    # Credentials without an image to pull are refused, naming the field.
    with pytest.raises(ApiError) as refused:
        gx.place_order(order_body(registry_auth={"username": "sdk-ci", "password": secret}))
    assert refused.value.status == 422
    assert any(field == "registry_auth" for field, _ in refused.value.errors), refused.value
