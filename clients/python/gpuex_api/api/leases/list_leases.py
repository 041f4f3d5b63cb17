from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.lease_page import LeasePage
from ...models.list_leases_state import ListLeasesState
from ...models.problem import Problem
from ...types import UNSET, Unset
from typing import cast
from uuid import UUID



def _get_kwargs(
    *,
    state: ListLeasesState | Unset = UNSET,
    limit: int | Unset = UNSET,
    cursor: UUID | Unset = UNSET,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    json_state: str | Unset = UNSET
    if not isinstance(state, Unset):
        json_state = state.value

    params["state"] = json_state

    params["limit"] = limit

    json_cursor: str | Unset = UNSET
    if not isinstance(cursor, Unset):
        json_cursor = str(cursor)
    params["cursor"] = json_cursor


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/leases",
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> LeasePage | Problem | None:
    if response.status_code == 200:
        response_200 = LeasePage.from_dict(response.json())



        return response_200

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[LeasePage | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    state: ListLeasesState | Unset = UNSET,
    limit: int | Unset = UNSET,
    cursor: UUID | Unset = UNSET,

) -> Response[LeasePage | Problem]:
    """ The caller's leases, newest first.

    Args:
        state (ListLeasesState | Unset): Where a lease stands (ARCHITECTURE.md §4); rows keep the
            name as text.
        limit (int | Unset):
        cursor (UUID | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[LeasePage | Problem]
     """


    kwargs = _get_kwargs(
        state=state,
limit=limit,
cursor=cursor,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    *,
    client: AuthenticatedClient,
    state: ListLeasesState | Unset = UNSET,
    limit: int | Unset = UNSET,
    cursor: UUID | Unset = UNSET,

) -> LeasePage | Problem | None:
    """ The caller's leases, newest first.

    Args:
        state (ListLeasesState | Unset): Where a lease stands (ARCHITECTURE.md §4); rows keep the
            name as text.
        limit (int | Unset):
        cursor (UUID | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        LeasePage | Problem
     """


    return sync_detailed(
        client=client,
state=state,
limit=limit,
cursor=cursor,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    state: ListLeasesState | Unset = UNSET,
    limit: int | Unset = UNSET,
    cursor: UUID | Unset = UNSET,

) -> Response[LeasePage | Problem]:
    """ The caller's leases, newest first.

    Args:
        state (ListLeasesState | Unset): Where a lease stands (ARCHITECTURE.md §4); rows keep the
            name as text.
        limit (int | Unset):
        cursor (UUID | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[LeasePage | Problem]
     """


    kwargs = _get_kwargs(
        state=state,
limit=limit,
cursor=cursor,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    *,
    client: AuthenticatedClient,
    state: ListLeasesState | Unset = UNSET,
    limit: int | Unset = UNSET,
    cursor: UUID | Unset = UNSET,

) -> LeasePage | Problem | None:
    """ The caller's leases, newest first.

    Args:
        state (ListLeasesState | Unset): Where a lease stands (ARCHITECTURE.md §4); rows keep the
            name as text.
        limit (int | Unset):
        cursor (UUID | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        LeasePage | Problem
     """


    return (await asyncio_detailed(
        client=client,
state=state,
limit=limit,
cursor=cursor,

    )).parsed
