"""Job-history imports (``POST /v1/profile/imports``): a Slurm, Kubernetes or
CSV history streamed in as a capacity profile, and the imports kept."""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

import httpx
from gpuex_api.api.billing import delete_import as delete_import_op
from gpuex_api.api.billing import get_import as get_import_op
from gpuex_api.api.billing import list_imports as list_imports_op
from gpuex_api.client import AuthenticatedClient, Client
from gpuex_api.models import ProfileImport, ProfileImportDetail, ProfileImportList

from .errors import ApiError, _ok, _raw_error

#: What :meth:`Gpuex.import_history` reads a job history from.
HistorySource = str | Path | bytes | IO[bytes] | IO[str] | Iterable[bytes]


class ImportsMixin:
    """The import calls of :class:`gpuex.Gpuex`."""

    api: AuthenticatedClient | Client
    timeout_s: float
    retries: int

    def import_history(
        self,
        source: HistorySource,
        format: str,
        *,
        gpu_model: str | None = None,
        idempotency_key: str | None = None,
    ) -> ProfileImport:
        """Imports a job history as a capacity profile (``POST /v1/profile/imports``)
        under an ``Idempotency-Key`` (a fresh one unless given); answers the rows
        taken, skipped and refused (``rejected``: each refused row's line and why).

        ``format`` is ``slurm`` (``sacct --parsable2``), ``k8s`` (``kubectl get pods
        -o json``) or ``csv`` (``start,end,gpus[,gpu_model][,tag]``); ``gpu_model``
        prices rows that name no model the catalog knows (server default
        H100-SXM5-80GB). ``source`` is a path (``str`` or ``Path``), the file's
        ``bytes``, an open file or an iterable of ``bytes``: a file is streamed
        a chunk at a time, never read whole. A transport error or a 5xx is
        retried with the same key when the file can be sent again (a path,
        ``bytes`` or a seekable file): the server answers the first import,
        never imports it twice. The profile is then :meth:`get_import`,
        ``profile(import_id=...)`` and ``tco(..., import_id=...)``.
        """
        params = {"format": format}
        if gpu_model is not None:
            params["gpu_model"] = gpu_model
        headers = {"Content-Type": "application/octet-stream", "Idempotency-Key": idempotency_key or str(uuid.uuid4())}
        # The server parses the file as it arrives (for up to its
        # import_timeout_s): connecting and each write are bounded here, the
        # wait for the answer after the last byte is not.
        timeout = httpx.Timeout(self.timeout_s, read=None)
        replayable = isinstance(source, (str, Path, bytes)) or _seekable(source)
        offset = source.tell() if replayable and hasattr(source, "tell") else 0  # type: ignore[union-attr]

        def send() -> httpx.Response:
            with contextlib.ExitStack() as opened:
                content: Any
                if isinstance(source, (str, Path)):
                    # httpx reads an open file a chunk at a time, its length known.
                    content = opened.enter_context(open(source, "rb"))
                elif isinstance(source, bytes):
                    content = source
                else:
                    if replayable:
                        source.seek(offset)  # type: ignore[union-attr]
                    content = _chunks(source)
                return self.api.get_httpx_client().post(
                    "/v1/profile/imports", params=params, headers=headers, content=content, timeout=timeout
                )

        attempt = 0
        while True:
            attempt += 1
            try:
                response = send()
            except httpx.TransportError:
                if not replayable or attempt >= self.retries:
                    raise
            else:
                if not (response.status_code >= 500 and replayable and attempt < self.retries):
                    if response.status_code != 201:
                        raise _raw_error(response)
                    return ProfileImport.from_dict(response.json())
            time.sleep(0.3 * attempt)

    def imports(self) -> list[ProfileImport]:
        """Your job-history imports, newest first (the latest 100)."""
        return _ok(list_imports_op.sync_detailed(client=self.api), ProfileImportList).imports

    def get_import(self, import_id: str | uuid.UUID) -> ProfileImportDetail:
        """One of your imports with its capacity profile (``profile``, ``None`` when
        no row was taken) and the GPUs its jobs held over time (``concurrency``:
        at most 240 equal stretches, each's ``mean_gpus`` and ``peak_gpus``).
        Another caller's import is 404, as a missing one."""
        return _ok(get_import_op.sync_detailed(uuid.UUID(str(import_id)), client=self.api), ProfileImportDetail)

    def delete_import(self, import_id: str | uuid.UUID) -> None:
        """Deletes one of your imports and its profile."""
        response = delete_import_op.sync_detailed(uuid.UUID(str(import_id)), client=self.api)
        if int(response.status_code) != 204:
            raise ApiError.from_response(response)


def _seekable(source: Any) -> bool:
    try:
        return bool(source.seekable())
    except (AttributeError, ValueError, OSError):
        return False


def _chunks(source: IO[bytes] | IO[str] | Iterable[bytes], size: int = 256 * 1024) -> Iterator[bytes]:
    """An upload's body from an open file (a text file's as UTF-8) or an
    iterable of bytes, a chunk at a time."""
    read = getattr(source, "read", None)
    if read is None:
        yield from source  # type: ignore[misc]
        return
    while True:
        chunk = read(size)
        if not chunk:
            return
        yield chunk.encode("utf-8") if isinstance(chunk, str) else chunk
