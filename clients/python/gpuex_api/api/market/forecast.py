from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.forecast_view import ForecastView
from ...models.problem import Problem
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    *,
    gpu_model: str | Unset = UNSET,
    region: str | Unset = UNSET,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    params["gpu_model"] = gpu_model

    params["region"] = region


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/market/forecast",
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> ForecastView | Problem | None:
    if response.status_code == 200:
        response_200 = ForecastView.from_dict(response.json())



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[ForecastView | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    gpu_model: str | Unset = UNSET,
    region: str | Unset = UNSET,

) -> Response[ForecastView | Problem]:
    """ The demand forecast per (GPU model, region): on-demand and reserved
    demand per minute, 15 minutes ahead, refitted every minute.

    Args:
        gpu_model (str | Unset):
        region (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ForecastView | Problem]
     """


    kwargs = _get_kwargs(
        gpu_model=gpu_model,
region=region,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    *,
    client: AuthenticatedClient | Client,
    gpu_model: str | Unset = UNSET,
    region: str | Unset = UNSET,

) -> ForecastView | Problem | None:
    """ The demand forecast per (GPU model, region): on-demand and reserved
    demand per minute, 15 minutes ahead, refitted every minute.

    Args:
        gpu_model (str | Unset):
        region (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ForecastView | Problem
     """


    return sync_detailed(
        client=client,
gpu_model=gpu_model,
region=region,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    gpu_model: str | Unset = UNSET,
    region: str | Unset = UNSET,

) -> Response[ForecastView | Problem]:
    """ The demand forecast per (GPU model, region): on-demand and reserved
    demand per minute, 15 minutes ahead, refitted every minute.

    Args:
        gpu_model (str | Unset):
        region (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ForecastView | Problem]
     """


    kwargs = _get_kwargs(
        gpu_model=gpu_model,
region=region,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    gpu_model: str | Unset = UNSET,
    region: str | Unset = UNSET,

) -> ForecastView | Problem | None:
    """ The demand forecast per (GPU model, region): on-demand and reserved
    demand per minute, 15 minutes ahead, refitted every minute.

    Args:
        gpu_model (str | Unset):
        region (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ForecastView | Problem
     """


    return (await asyncio_detailed(
        client=client,
gpu_model=gpu_model,
region=region,

    )).parsed
