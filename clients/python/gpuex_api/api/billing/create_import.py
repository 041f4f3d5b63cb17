from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.create_import_format import CreateImportFormat
from ...models.problem import Problem
from ...models.profile_import import ProfileImport
from ...types import File, FileTypes
from ...types import UNSET, Unset
from io import BytesIO
from typing import cast



def _get_kwargs(
    *,
    body: File,
    format_: CreateImportFormat,
    gpu_model: str | Unset = UNSET,
    idempotency_key: None | str | Unset = UNSET,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(idempotency_key, Unset):
        headers["Idempotency-Key"] = idempotency_key



    

    params: dict[str, Any] = {}

    json_format_ = format_.value
    params["format"] = json_format_

    params["gpu_model"] = gpu_model


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/profile/imports",
        "params": params,
    }

    _kwargs["content"] = body.payload

    headers["Content-Type"] = "application/octet-stream"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | ProfileImport | None:
    if response.status_code == 201:
        response_201 = ProfileImport.from_dict(response.json())



        return response_201

    if response.status_code == 400:
        response_400 = Problem.from_dict(response.json())



        return response_400

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())



        return response_401

    if response.status_code == 403:
        response_403 = Problem.from_dict(response.json())



        return response_403

    if response.status_code == 405:
        response_405 = Problem.from_dict(response.json())



        return response_405

    if response.status_code == 408:
        response_408 = Problem.from_dict(response.json())



        return response_408

    if response.status_code == 413:
        response_413 = Problem.from_dict(response.json())



        return response_413

    if response.status_code == 415:
        response_415 = Problem.from_dict(response.json())



        return response_415

    if response.status_code == 422:
        response_422 = Problem.from_dict(response.json())



        return response_422

    if response.status_code == 429:
        response_429 = Problem.from_dict(response.json())



        return response_429

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | ProfileImport]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: File,
    format_: CreateImportFormat,
    gpu_model: str | Unset = UNSET,
    idempotency_key: None | str | Unset = UNSET,

) -> Response[Problem | ProfileImport]:
    """ Import a job history: the file is the body, as it came from `sacct`,
    `kubectl` or a spreadsheet. Answers the rows taken and every row refused
    with its line; the import's profile prices in `POST /v1/tco` with
    `import_id`. An `Idempotency-Key` with the same file answers the first
    import again.

    Args:
        format_ (CreateImportFormat): The formats an import reads.
        gpu_model (str | Unset):
        idempotency_key (None | str | Unset):
        body (File):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | ProfileImport]
     """


    kwargs = _get_kwargs(
        body=body,
format_=format_,
gpu_model=gpu_model,
idempotency_key=idempotency_key,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    *,
    client: AuthenticatedClient,
    body: File,
    format_: CreateImportFormat,
    gpu_model: str | Unset = UNSET,
    idempotency_key: None | str | Unset = UNSET,

) -> Problem | ProfileImport | None:
    """ Import a job history: the file is the body, as it came from `sacct`,
    `kubectl` or a spreadsheet. Answers the rows taken and every row refused
    with its line; the import's profile prices in `POST /v1/tco` with
    `import_id`. An `Idempotency-Key` with the same file answers the first
    import again.

    Args:
        format_ (CreateImportFormat): The formats an import reads.
        gpu_model (str | Unset):
        idempotency_key (None | str | Unset):
        body (File):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | ProfileImport
     """


    return sync_detailed(
        client=client,
body=body,
format_=format_,
gpu_model=gpu_model,
idempotency_key=idempotency_key,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: File,
    format_: CreateImportFormat,
    gpu_model: str | Unset = UNSET,
    idempotency_key: None | str | Unset = UNSET,

) -> Response[Problem | ProfileImport]:
    """ Import a job history: the file is the body, as it came from `sacct`,
    `kubectl` or a spreadsheet. Answers the rows taken and every row refused
    with its line; the import's profile prices in `POST /v1/tco` with
    `import_id`. An `Idempotency-Key` with the same file answers the first
    import again.

    Args:
        format_ (CreateImportFormat): The formats an import reads.
        gpu_model (str | Unset):
        idempotency_key (None | str | Unset):
        body (File):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | ProfileImport]
     """


    kwargs = _get_kwargs(
        body=body,
format_=format_,
gpu_model=gpu_model,
idempotency_key=idempotency_key,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    *,
    client: AuthenticatedClient,
    body: File,
    format_: CreateImportFormat,
    gpu_model: str | Unset = UNSET,
    idempotency_key: None | str | Unset = UNSET,

) -> Problem | ProfileImport | None:
    """ Import a job history: the file is the body, as it came from `sacct`,
    `kubectl` or a spreadsheet. Answers the rows taken and every row refused
    with its line; the import's profile prices in `POST /v1/tco` with
    `import_id`. An `Idempotency-Key` with the same file answers the first
    import again.

    Args:
        format_ (CreateImportFormat): The formats an import reads.
        gpu_model (str | Unset):
        idempotency_key (None | str | Unset):
        body (File):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | ProfileImport
     """


    return (await asyncio_detailed(
        client=client,
body=body,
format_=format_,
gpu_model=gpu_model,
idempotency_key=idempotency_key,

    )).parsed
