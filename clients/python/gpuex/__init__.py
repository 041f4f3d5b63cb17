"""The gpuex Python SDK.

``gpuex_api`` is generated from ``openapi/openapi.json`` by
openapi-python-client (every endpoint, typed models); this package is the
thin layer over it that a buyer or provider uses day to day: log in (the
session refreshes itself with its rotating refresh token), place
orders with an idempotency key (retried safely), iterate every page of a
list, follow the event stream, stream a job history in as a capacity
profile (``import_history``), try a workload on several shapes (``trial``,
``wait_for_trial``), and verify webhook signatures.
"""

from .client import ApiError, Gpuex
from .webhooks import WebhookSignatureError, verify_webhook

__all__ = ["ApiError", "Gpuex", "WebhookSignatureError", "verify_webhook"]
