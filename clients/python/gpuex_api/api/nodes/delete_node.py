from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.problem import Problem
from ...types import UNSET, Unset
from typing import cast
from uuid import UUID



def _get_kwargs(
    id: UUID,
    *,
    force: bool | Unset = UNSET,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    params["force"] = force


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "delete",
        "url": "/v1/nodes/{id}".format(id=quote(str(id), safe=""),),
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Any | Problem | None:
    if response.status_code == 204:
        response_204 = cast(Any, None)
        return response_204

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Any | Problem]:
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
    force: bool | Unset = UNSET,

) -> Response[Any | Problem]:
    """ Delete a node (its provider or an admin): its token is revoked at once
    (the agent's next request gets 401) and it leaves the market.

     A node still holding live leases is refused with 409 `node_has_leases`
    unless `force=true`: cordon it first and let them finish, or force it and
    they end as on node loss. Deleting a node that is already deleted
    answers 204 again.

    Args:
        id (UUID):
        force (bool | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | Problem]
     """


    kwargs = _get_kwargs(
        id=id,
force=force,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    id: UUID,
    *,
    client: AuthenticatedClient,
    force: bool | Unset = UNSET,

) -> Any | Problem | None:
    """ Delete a node (its provider or an admin): its token is revoked at once
    (the agent's next request gets 401) and it leaves the market.

     A node still holding live leases is refused with 409 `node_has_leases`
    unless `force=true`: cordon it first and let them finish, or force it and
    they end as on node loss. Deleting a node that is already deleted
    answers 204 again.

    Args:
        id (UUID):
        force (bool | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | Problem
     """


    return sync_detailed(
        id=id,
client=client,
force=force,

    ).parsed

async def asyncio_detailed(
    id: UUID,
    *,
    client: AuthenticatedClient,
    force: bool | Unset = UNSET,

) -> Response[Any | Problem]:
    """ Delete a node (its provider or an admin): its token is revoked at once
    (the agent's next request gets 401) and it leaves the market.

     A node still holding live leases is refused with 409 `node_has_leases`
    unless `force=true`: cordon it first and let them finish, or force it and
    they end as on node loss. Deleting a node that is already deleted
    answers 204 again.

    Args:
        id (UUID):
        force (bool | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | Problem]
     """


    kwargs = _get_kwargs(
        id=id,
force=force,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    id: UUID,
    *,
    client: AuthenticatedClient,
    force: bool | Unset = UNSET,

) -> Any | Problem | None:
    """ Delete a node (its provider or an admin): its token is revoked at once
    (the agent's next request gets 401) and it leaves the market.

     A node still holding live leases is refused with 409 `node_has_leases`
    unless `force=true`: cordon it first and let them finish, or force it and
    they end as on node loss. Deleting a node that is already deleted
    answers 204 again.

    Args:
        id (UUID):
        force (bool | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | Problem
     """


    return (await asyncio_detailed(
        id=id,
client=client,
force=force,

    )).parsed
