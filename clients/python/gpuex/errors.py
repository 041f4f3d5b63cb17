"""What a non-2xx answer raises, and the readers of generated answers."""

from __future__ import annotations

import json
from typing import Any, TypeVar

import httpx
from gpuex_api.models import Problem
from gpuex_api.types import Response, Unset

T = TypeVar("T")


class ApiError(Exception):
    """A non-2xx answer: the problem+json's status, code, detail and field errors."""

    def __init__(self, status: int, detail: str, code: str | None = None, errors: list[tuple[str, str]] | None = None):
        self.status = status
        self.detail = detail
        self.code = code
        self.errors = errors or []
        fields = "; ".join(f"{f}: {m}" for f, m in self.errors)
        super().__init__(f"{status} {detail}" + (f" ({fields})" if fields else ""))

    @classmethod
    def from_response(cls, response: Response[Any]) -> ApiError:
        parsed = response.parsed
        if isinstance(parsed, Problem):
            errors = [] if isinstance(parsed.errors, Unset) else [(e.field, e.message) for e in parsed.errors]
            return cls(parsed.status, parsed.detail, parsed.code, errors)
        try:
            body = json.loads(response.content)
        except ValueError:
            body = {}
        return cls(int(response.status_code), str(body.get("detail") or response.content[:200]), body.get("code"))


def _ok(response: Response[Any], kind: type[T]) -> T:
    if 200 <= int(response.status_code) < 300 and isinstance(response.parsed, kind):
        return response.parsed
    raise ApiError.from_response(response)


def _model(value: T | dict[str, Any], kind: Any) -> T:
    """A generated model, from itself or from the dict of its JSON."""
    return kind.from_dict(value) if isinstance(value, dict) else value


def _raw_error(response: httpx.Response) -> ApiError:
    try:
        body = response.json()
    except ValueError:
        body = {}
    errors = [(e.get("field", ""), e.get("message", "")) for e in body.get("errors", [])]
    return ApiError(response.status_code, str(body.get("detail") or response.reason_phrase), body.get("code"), errors)
