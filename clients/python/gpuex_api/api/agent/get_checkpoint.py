from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.problem import Problem
from typing import cast
from uuid import UUID



def _get_kwargs(
    lease_id: UUID,

) -> dict[str, Any]:
    

    

    

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/agent/assignments/{lease_id}/checkpoint".format(lease_id=quote(str(lease_id), safe=""),),
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | list[int] | None:
    if response.status_code == 200:
        response_200 = cast(list[int], response.content)

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | list[int]]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    lease_id: UUID,
    *,
    client: AuthenticatedClient,

) -> Response[Problem | list[int]]:
    """ The lease's order's latest checkpoint, a tar archive, for the lease to
    resume from; the lease is recorded as resumed from it.

    Args:
        lease_id (UUID):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | list[int]]
     """


    kwargs = _get_kwargs(
        lease_id=lease_id,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    lease_id: UUID,
    *,
    client: AuthenticatedClient,

) -> Problem | list[int] | None:
    """ The lease's order's latest checkpoint, a tar archive, for the lease to
    resume from; the lease is recorded as resumed from it.

    Args:
        lease_id (UUID):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | list[int]
     """


    return sync_detailed(
        lease_id=lease_id,
client=client,

    ).parsed

async def asyncio_detailed(
    lease_id: UUID,
    *,
    client: AuthenticatedClient,

) -> Response[Problem | list[int]]:
    """ The lease's order's latest checkpoint, a tar archive, for the lease to
    resume from; the lease is recorded as resumed from it.

    Args:
        lease_id (UUID):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | list[int]]
     """


    kwargs = _get_kwargs(
        lease_id=lease_id,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    lease_id: UUID,
    *,
    client: AuthenticatedClient,

) -> Problem | list[int] | None:
    """ The lease's order's latest checkpoint, a tar archive, for the lease to
    resume from; the lease is recorded as resumed from it.

    Args:
        lease_id (UUID):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | list[int]
     """


    return (await asyncio_detailed(
        lease_id=lease_id,
client=client,

    )).parsed
