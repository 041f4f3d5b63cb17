"""Verifying ``Gpuex-Signature`` on a webhook delivery.

The server signs each delivery like Stripe does:
``Gpuex-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>``,
keyed with the secret's text (``whsec_...``) as the webhook's creation showed it.
"""

from __future__ import annotations

import hashlib
import hmac
import time


class WebhookSignatureError(ValueError):
    """The delivery is not signed with this secret, or is too old."""


def verify_webhook(
    body: bytes | str,
    signature_header: str,
    secret: str,
    *,
    tolerance_s: int = 300,
    now: float | None = None,
) -> None:
    """Raises :class:`WebhookSignatureError` unless ``body`` carries a valid signature.

    ``body`` must be the raw request body, byte for byte (not re-encoded JSON).
    ``tolerance_s`` bounds how old ``t`` may be, so a captured delivery cannot
    be replayed later; pass 0 to skip that check.
    """
    raw = body.encode() if isinstance(body, str) else body
    timestamp: int | None = None
    signatures: list[str] = []
    for part in signature_header.split(","):
        key, _, value = part.strip().partition("=")
        if key == "t":
            try:
                timestamp = int(value)
            except ValueError as e:
                raise WebhookSignatureError(f"bad timestamp {value!r}") from e
        elif key == "v1":
            signatures.append(value)
    if timestamp is None or not signatures:
        raise WebhookSignatureError("the header has no t= or no v1=")
    if tolerance_s > 0:
        current = time.time() if now is None else now
        if abs(current - timestamp) > tolerance_s:
            raise WebhookSignatureError(f"the signature's time {timestamp} is outside the tolerance")
    expected = hmac.new(secret.encode(), str(timestamp).encode() + b"." + raw, hashlib.sha256).hexdigest()
    # During a secret rotation the header may carry several v1 values.
    if not any(hmac.compare_digest(expected, s) for s in signatures):
        raise WebhookSignatureError("no v1 signature matches this secret")
