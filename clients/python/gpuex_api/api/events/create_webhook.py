from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.created_webhook import CreatedWebhook
from ...models.new_webhook import NewWebhook
from ...models.problem import Problem
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    *,
    body: NewWebhook,
    idempotency_key: None | str | Unset = UNSET,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(idempotency_key, Unset):
        headers["Idempotency-Key"] = idempotency_key



    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/webhooks",
    }

    _kwargs["json"] = body.to_dict()


    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> CreatedWebhook | Problem | None:
    if response.status_code == 201:
        response_201 = CreatedWebhook.from_dict(response.json())



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

    if response.status_code == 409:
        response_409 = Problem.from_dict(response.json())



        return response_409

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[CreatedWebhook | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: NewWebhook,
    idempotency_key: None | str | Unset = UNSET,

) -> Response[CreatedWebhook | Problem]:
    r""" Adds an endpoint for the caller's events (ARCHITECTURE.md §15). Each delivery is
    a POST of the event, as `GET /v1/events` shows it, with
    `Gpuex-Signature: t=<unix>,v1=<hex HMAC-SHA256(secret, \"<t>.<body>\")>`,
    `Gpuex-Event-Id` and `Gpuex-Event-Type`; anything but a 2xx is retried
    with backoff for 24 h. At least once: dedupe by event id.

    Args:
        idempotency_key (None | str | Unset):
        body (NewWebhook):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[CreatedWebhook | Problem]
     """


    kwargs = _get_kwargs(
        body=body,
idempotency_key=idempotency_key,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    *,
    client: AuthenticatedClient,
    body: NewWebhook,
    idempotency_key: None | str | Unset = UNSET,

) -> CreatedWebhook | Problem | None:
    r""" Adds an endpoint for the caller's events (ARCHITECTURE.md §15). Each delivery is
    a POST of the event, as `GET /v1/events` shows it, with
    `Gpuex-Signature: t=<unix>,v1=<hex HMAC-SHA256(secret, \"<t>.<body>\")>`,
    `Gpuex-Event-Id` and `Gpuex-Event-Type`; anything but a 2xx is retried
    with backoff for 24 h. At least once: dedupe by event id.

    Args:
        idempotency_key (None | str | Unset):
        body (NewWebhook):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        CreatedWebhook | Problem
     """


    return sync_detailed(
        client=client,
body=body,
idempotency_key=idempotency_key,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: NewWebhook,
    idempotency_key: None | str | Unset = UNSET,

) -> Response[CreatedWebhook | Problem]:
    r""" Adds an endpoint for the caller's events (ARCHITECTURE.md §15). Each delivery is
    a POST of the event, as `GET /v1/events` shows it, with
    `Gpuex-Signature: t=<unix>,v1=<hex HMAC-SHA256(secret, \"<t>.<body>\")>`,
    `Gpuex-Event-Id` and `Gpuex-Event-Type`; anything but a 2xx is retried
    with backoff for 24 h. At least once: dedupe by event id.

    Args:
        idempotency_key (None | str | Unset):
        body (NewWebhook):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[CreatedWebhook | Problem]
     """


    kwargs = _get_kwargs(
        body=body,
idempotency_key=idempotency_key,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    *,
    client: AuthenticatedClient,
    body: NewWebhook,
    idempotency_key: None | str | Unset = UNSET,

) -> CreatedWebhook | Problem | None:
    r""" Adds an endpoint for the caller's events (ARCHITECTURE.md §15). Each delivery is
    a POST of the event, as `GET /v1/events` shows it, with
    `Gpuex-Signature: t=<unix>,v1=<hex HMAC-SHA256(secret, \"<t>.<body>\")>`,
    `Gpuex-Event-Id` and `Gpuex-Event-Type`; anything but a 2xx is retried
    with backoff for 24 h. At least once: dedupe by event id.

    Args:
        idempotency_key (None | str | Unset):
        body (NewWebhook):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        CreatedWebhook | Problem
     """


    return (await asyncio_detailed(
        client=client,
body=body,
idempotency_key=idempotency_key,

    )).parsed
