from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.price_change_view import PriceChangeView
from ...models.price_history_unit import PriceHistoryUnit
from ...models.problem import Problem
from ...types import UNSET, Unset
from dateutil.parser import isoparse
from typing import cast
import datetime



def _get_kwargs(
    *,
    region: str | Unset = UNSET,
    gpu_model: str | Unset = UNSET,
    unit: PriceHistoryUnit | Unset = UNSET,
    from_: datetime.datetime | Unset = UNSET,
    to: datetime.datetime | Unset = UNSET,
    limit: int | Unset = UNSET,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    params["region"] = region

    params["gpu_model"] = gpu_model

    json_unit: str | Unset = UNSET
    if not isinstance(unit, Unset):
        json_unit = unit.value

    params["unit"] = json_unit

    json_from_: str | Unset = UNSET
    if not isinstance(from_, Unset):
        json_from_ = from_.isoformat()
    params["from"] = json_from_

    json_to: str | Unset = UNSET
    if not isinstance(to, Unset):
        json_to = to.isoformat()
    params["to"] = json_to

    params["limit"] = limit


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/prices/history",
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | list[PriceChangeView] | None:
    if response.status_code == 200:
        response_200 = []
        _response_200 = response.json()
        for response_200_item_data in (_response_200):
            response_200_item = PriceChangeView.from_dict(response_200_item_data)



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | list[PriceChangeView]]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    region: str | Unset = UNSET,
    gpu_model: str | Unset = UNSET,
    unit: PriceHistoryUnit | Unset = UNSET,
    from_: datetime.datetime | Unset = UNSET,
    to: datetime.datetime | Unset = UNSET,
    limit: int | Unset = UNSET,

) -> Response[Problem | list[PriceChangeView]]:
    """ Every change of a list price, newest first.

    Args:
        region (str | Unset):
        gpu_model (str | Unset):
        unit (PriceHistoryUnit | Unset): A unit gpuex sells, priced per hour and metered per
            second.
        from_ (datetime.datetime | Unset):
        to (datetime.datetime | Unset):
        limit (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | list[PriceChangeView]]
     """


    kwargs = _get_kwargs(
        region=region,
gpu_model=gpu_model,
unit=unit,
from_=from_,
to=to,
limit=limit,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    *,
    client: AuthenticatedClient | Client,
    region: str | Unset = UNSET,
    gpu_model: str | Unset = UNSET,
    unit: PriceHistoryUnit | Unset = UNSET,
    from_: datetime.datetime | Unset = UNSET,
    to: datetime.datetime | Unset = UNSET,
    limit: int | Unset = UNSET,

) -> Problem | list[PriceChangeView] | None:
    """ Every change of a list price, newest first.

    Args:
        region (str | Unset):
        gpu_model (str | Unset):
        unit (PriceHistoryUnit | Unset): A unit gpuex sells, priced per hour and metered per
            second.
        from_ (datetime.datetime | Unset):
        to (datetime.datetime | Unset):
        limit (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | list[PriceChangeView]
     """


    return sync_detailed(
        client=client,
region=region,
gpu_model=gpu_model,
unit=unit,
from_=from_,
to=to,
limit=limit,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    region: str | Unset = UNSET,
    gpu_model: str | Unset = UNSET,
    unit: PriceHistoryUnit | Unset = UNSET,
    from_: datetime.datetime | Unset = UNSET,
    to: datetime.datetime | Unset = UNSET,
    limit: int | Unset = UNSET,

) -> Response[Problem | list[PriceChangeView]]:
    """ Every change of a list price, newest first.

    Args:
        region (str | Unset):
        gpu_model (str | Unset):
        unit (PriceHistoryUnit | Unset): A unit gpuex sells, priced per hour and metered per
            second.
        from_ (datetime.datetime | Unset):
        to (datetime.datetime | Unset):
        limit (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | list[PriceChangeView]]
     """


    kwargs = _get_kwargs(
        region=region,
gpu_model=gpu_model,
unit=unit,
from_=from_,
to=to,
limit=limit,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    region: str | Unset = UNSET,
    gpu_model: str | Unset = UNSET,
    unit: PriceHistoryUnit | Unset = UNSET,
    from_: datetime.datetime | Unset = UNSET,
    to: datetime.datetime | Unset = UNSET,
    limit: int | Unset = UNSET,

) -> Problem | list[PriceChangeView] | None:
    """ Every change of a list price, newest first.

    Args:
        region (str | Unset):
        gpu_model (str | Unset):
        unit (PriceHistoryUnit | Unset): A unit gpuex sells, priced per hour and metered per
            second.
        from_ (datetime.datetime | Unset):
        to (datetime.datetime | Unset):
        limit (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | list[PriceChangeView]
     """


    return (await asyncio_detailed(
        client=client,
region=region,
gpu_model=gpu_model,
unit=unit,
from_=from_,
to=to,
limit=limit,

    )).parsed
