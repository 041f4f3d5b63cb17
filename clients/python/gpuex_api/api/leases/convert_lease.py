from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.convert_request import ConvertRequest
from ...models.lease_view import LeaseView
from ...models.problem import Problem
from ...types import UNSET, Unset
from typing import cast
from uuid import UUID



def _get_kwargs(
    id: UUID,
    *,
    body: ConvertRequest,
    idempotency_key: None | str | Unset = UNSET,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(idempotency_key, Unset):
        headers["Idempotency-Key"] = idempotency_key



    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/leases/{id}/convert".format(id=quote(str(id), safe=""),),
    }

    _kwargs["json"] = body.to_dict()


    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> LeaseView | Problem | None:
    if response.status_code == 200:
        response_200 = LeaseView.from_dict(response.json())



        return response_200

    if response.status_code == 400:
        response_400 = Problem.from_dict(response.json())



        return response_400

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())



        return response_401

    if response.status_code == 403:
        response_403 = Problem.from_dict(response.json())



        return response_403

    if response.status_code == 404:
        response_404 = Problem.from_dict(response.json())



        return response_404

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[LeaseView | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    id: UUID,
    *,
    client: AuthenticatedClient,
    body: ConvertRequest,
    idempotency_key: None | str | Unset = UNSET,

) -> Response[LeaseView | Problem]:
    """ Change a live lease's mode; its slice and workload stay as they are.

     spot → on_demand: while running and not yet noticed; from now on the
    on-demand price (1.8 × list), never preempted, one hour held ahead.
    on_demand → reserved: on-demand until `from`, the reserved price
    (0.85 × list) from `from`, ending at `until`; the reserved part is owed
    whole and held like any reservation.
    A lease bought on resale keeps the seller's window as its outer bound:
    inside it the lease keeps paying the ask (the seller, not the provider,
    is paid for that time); an `until` past it is refused (409
    `resale_window`) — buy the time after it as a new order instead.

    Args:
        id (UUID):
        idempotency_key (None | str | Unset):
        body (ConvertRequest): A mode conversion: `{"to": "on_demand"}` for a running spot lease,
            or
            `{"to": "reserved", "from": T1, "until": T2}` for an on-demand one.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[LeaseView | Problem]
     """


    kwargs = _get_kwargs(
        id=id,
body=body,
idempotency_key=idempotency_key,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    id: UUID,
    *,
    client: AuthenticatedClient,
    body: ConvertRequest,
    idempotency_key: None | str | Unset = UNSET,

) -> LeaseView | Problem | None:
    """ Change a live lease's mode; its slice and workload stay as they are.

     spot → on_demand: while running and not yet noticed; from now on the
    on-demand price (1.8 × list), never preempted, one hour held ahead.
    on_demand → reserved: on-demand until `from`, the reserved price
    (0.85 × list) from `from`, ending at `until`; the reserved part is owed
    whole and held like any reservation.
    A lease bought on resale keeps the seller's window as its outer bound:
    inside it the lease keeps paying the ask (the seller, not the provider,
    is paid for that time); an `until` past it is refused (409
    `resale_window`) — buy the time after it as a new order instead.

    Args:
        id (UUID):
        idempotency_key (None | str | Unset):
        body (ConvertRequest): A mode conversion: `{"to": "on_demand"}` for a running spot lease,
            or
            `{"to": "reserved", "from": T1, "until": T2}` for an on-demand one.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        LeaseView | Problem
     """


    return sync_detailed(
        id=id,
client=client,
body=body,
idempotency_key=idempotency_key,

    ).parsed

async def asyncio_detailed(
    id: UUID,
    *,
    client: AuthenticatedClient,
    body: ConvertRequest,
    idempotency_key: None | str | Unset = UNSET,

) -> Response[LeaseView | Problem]:
    """ Change a live lease's mode; its slice and workload stay as they are.

     spot → on_demand: while running and not yet noticed; from now on the
    on-demand price (1.8 × list), never preempted, one hour held ahead.
    on_demand → reserved: on-demand until `from`, the reserved price
    (0.85 × list) from `from`, ending at `until`; the reserved part is owed
    whole and held like any reservation.
    A lease bought on resale keeps the seller's window as its outer bound:
    inside it the lease keeps paying the ask (the seller, not the provider,
    is paid for that time); an `until` past it is refused (409
    `resale_window`) — buy the time after it as a new order instead.

    Args:
        id (UUID):
        idempotency_key (None | str | Unset):
        body (ConvertRequest): A mode conversion: `{"to": "on_demand"}` for a running spot lease,
            or
            `{"to": "reserved", "from": T1, "until": T2}` for an on-demand one.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[LeaseView | Problem]
     """


    kwargs = _get_kwargs(
        id=id,
body=body,
idempotency_key=idempotency_key,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    id: UUID,
    *,
    client: AuthenticatedClient,
    body: ConvertRequest,
    idempotency_key: None | str | Unset = UNSET,

) -> LeaseView | Problem | None:
    """ Change a live lease's mode; its slice and workload stay as they are.

     spot → on_demand: while running and not yet noticed; from now on the
    on-demand price (1.8 × list), never preempted, one hour held ahead.
    on_demand → reserved: on-demand until `from`, the reserved price
    (0.85 × list) from `from`, ending at `until`; the reserved part is owed
    whole and held like any reservation.
    A lease bought on resale keeps the seller's window as its outer bound:
    inside it the lease keeps paying the ask (the seller, not the provider,
    is paid for that time); an `until` past it is refused (409
    `resale_window`) — buy the time after it as a new order instead.

    Args:
        id (UUID):
        idempotency_key (None | str | Unset):
        body (ConvertRequest): A mode conversion: `{"to": "on_demand"}` for a running spot lease,
            or
            `{"to": "reserved", "from": T1, "until": T2}` for an on-demand one.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        LeaseView | Problem
     """


    return (await asyncio_detailed(
        id=id,
client=client,
body=body,
idempotency_key=idempotency_key,

    )).parsed
