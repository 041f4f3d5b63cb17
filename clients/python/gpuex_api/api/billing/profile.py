from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.capacity_profile import CapacityProfile
from ...models.problem import Problem
from ...types import UNSET, Unset
from dateutil.parser import isoparse
from typing import cast
from uuid import UUID
import datetime



def _get_kwargs(
    *,
    from_: datetime.datetime | Unset = UNSET,
    to: datetime.datetime | Unset = UNSET,
    import_id: UUID | Unset = UNSET,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    json_from_: str | Unset = UNSET
    if not isinstance(from_, Unset):
        json_from_ = from_.isoformat()
    params["from"] = json_from_

    json_to: str | Unset = UNSET
    if not isinstance(to, Unset):
        json_to = to.isoformat()
    params["to"] = json_to

    json_import_id: str | Unset = UNSET
    if not isinstance(import_id, Unset):
        json_import_id = str(import_id)
    params["import_id"] = json_import_id


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/billing/profile",
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> CapacityProfile | Problem | None:
    if response.status_code == 200:
        response_200 = CapacityProfile.from_dict(response.json())



        return response_200

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[CapacityProfile | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    from_: datetime.datetime | Unset = UNSET,
    to: datetime.datetime | Unset = UNSET,
    import_id: UUID | Unset = UNSET,

) -> Response[CapacityProfile | Problem]:
    """ The caller's capacity profile: units held at once, lease durations and
    utilization, in total and by mode, GPU model and tag.

    Args:
        from_ (datetime.datetime | Unset):
        to (datetime.datetime | Unset):
        import_id (UUID | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[CapacityProfile | Problem]
     """


    kwargs = _get_kwargs(
        from_=from_,
to=to,
import_id=import_id,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    *,
    client: AuthenticatedClient,
    from_: datetime.datetime | Unset = UNSET,
    to: datetime.datetime | Unset = UNSET,
    import_id: UUID | Unset = UNSET,

) -> CapacityProfile | Problem | None:
    """ The caller's capacity profile: units held at once, lease durations and
    utilization, in total and by mode, GPU model and tag.

    Args:
        from_ (datetime.datetime | Unset):
        to (datetime.datetime | Unset):
        import_id (UUID | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        CapacityProfile | Problem
     """


    return sync_detailed(
        client=client,
from_=from_,
to=to,
import_id=import_id,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    from_: datetime.datetime | Unset = UNSET,
    to: datetime.datetime | Unset = UNSET,
    import_id: UUID | Unset = UNSET,

) -> Response[CapacityProfile | Problem]:
    """ The caller's capacity profile: units held at once, lease durations and
    utilization, in total and by mode, GPU model and tag.

    Args:
        from_ (datetime.datetime | Unset):
        to (datetime.datetime | Unset):
        import_id (UUID | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[CapacityProfile | Problem]
     """


    kwargs = _get_kwargs(
        from_=from_,
to=to,
import_id=import_id,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    *,
    client: AuthenticatedClient,
    from_: datetime.datetime | Unset = UNSET,
    to: datetime.datetime | Unset = UNSET,
    import_id: UUID | Unset = UNSET,

) -> CapacityProfile | Problem | None:
    """ The caller's capacity profile: units held at once, lease durations and
    utilization, in total and by mode, GPU model and tag.

    Args:
        from_ (datetime.datetime | Unset):
        to (datetime.datetime | Unset):
        import_id (UUID | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        CapacityProfile | Problem
     """


    return (await asyncio_detailed(
        client=client,
from_=from_,
to=to,
import_id=import_id,

    )).parsed
