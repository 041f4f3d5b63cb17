from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.history_interval import HistoryInterval
from ...models.history_point import HistoryPoint
from ...models.problem import Problem
from ...types import UNSET, Unset
from dateutil.parser import isoparse
from typing import cast
import datetime



def _get_kwargs(
    *,
    gpu_model: str,
    region: str,
    from_: datetime.datetime | Unset = UNSET,
    to: datetime.datetime | Unset = UNSET,
    interval: HistoryInterval | Unset = UNSET,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    params["gpu_model"] = gpu_model

    params["region"] = region

    json_from_: str | Unset = UNSET
    if not isinstance(from_, Unset):
        json_from_ = from_.isoformat()
    params["from"] = json_from_

    json_to: str | Unset = UNSET
    if not isinstance(to, Unset):
        json_to = to.isoformat()
    params["to"] = json_to

    json_interval: str | Unset = UNSET
    if not isinstance(interval, Unset):
        json_interval = interval.value

    params["interval"] = json_interval


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/market/history",
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | list[HistoryPoint] | None:
    if response.status_code == 200:
        response_200 = []
        _response_200 = response.json()
        for response_200_item_data in (_response_200):
            response_200_item = HistoryPoint.from_dict(response_200_item_data)



            response_200.append(response_200_item)

        return response_200

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | list[HistoryPoint]]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    gpu_model: str,
    region: str,
    from_: datetime.datetime | Unset = UNSET,
    to: datetime.datetime | Unset = UNSET,
    interval: HistoryInterval | Unset = UNSET,

) -> Response[Problem | list[HistoryPoint]]:
    """ The spot clearing index and unit prices of one market per interval,
    oldest first. A market that never cleared, or one that does not exist,
    has no history: an empty list.

    Args:
        gpu_model (str):
        region (str):
        from_ (datetime.datetime | Unset):
        to (datetime.datetime | Unset):
        interval (HistoryInterval | Unset): The length of one history bucket. Buckets start on
            whole UTC minutes,
            hours and days.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | list[HistoryPoint]]
     """


    kwargs = _get_kwargs(
        gpu_model=gpu_model,
region=region,
from_=from_,
to=to,
interval=interval,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    *,
    client: AuthenticatedClient | Client,
    gpu_model: str,
    region: str,
    from_: datetime.datetime | Unset = UNSET,
    to: datetime.datetime | Unset = UNSET,
    interval: HistoryInterval | Unset = UNSET,

) -> Problem | list[HistoryPoint] | None:
    """ The spot clearing index and unit prices of one market per interval,
    oldest first. A market that never cleared, or one that does not exist,
    has no history: an empty list.

    Args:
        gpu_model (str):
        region (str):
        from_ (datetime.datetime | Unset):
        to (datetime.datetime | Unset):
        interval (HistoryInterval | Unset): The length of one history bucket. Buckets start on
            whole UTC minutes,
            hours and days.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | list[HistoryPoint]
     """


    return sync_detailed(
        client=client,
gpu_model=gpu_model,
region=region,
from_=from_,
to=to,
interval=interval,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    gpu_model: str,
    region: str,
    from_: datetime.datetime | Unset = UNSET,
    to: datetime.datetime | Unset = UNSET,
    interval: HistoryInterval | Unset = UNSET,

) -> Response[Problem | list[HistoryPoint]]:
    """ The spot clearing index and unit prices of one market per interval,
    oldest first. A market that never cleared, or one that does not exist,
    has no history: an empty list.

    Args:
        gpu_model (str):
        region (str):
        from_ (datetime.datetime | Unset):
        to (datetime.datetime | Unset):
        interval (HistoryInterval | Unset): The length of one history bucket. Buckets start on
            whole UTC minutes,
            hours and days.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | list[HistoryPoint]]
     """


    kwargs = _get_kwargs(
        gpu_model=gpu_model,
region=region,
from_=from_,
to=to,
interval=interval,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    gpu_model: str,
    region: str,
    from_: datetime.datetime | Unset = UNSET,
    to: datetime.datetime | Unset = UNSET,
    interval: HistoryInterval | Unset = UNSET,

) -> Problem | list[HistoryPoint] | None:
    """ The spot clearing index and unit prices of one market per interval,
    oldest first. A market that never cleared, or one that does not exist,
    has no history: an empty list.

    Args:
        gpu_model (str):
        region (str):
        from_ (datetime.datetime | Unset):
        to (datetime.datetime | Unset):
        interval (HistoryInterval | Unset): The length of one history bucket. Buckets start on
            whole UTC minutes,
            hours and days.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | list[HistoryPoint]
     """


    return (await asyncio_detailed(
        client=client,
gpu_model=gpu_model,
region=region,
from_=from_,
to=to,
interval=interval,

    )).parsed
