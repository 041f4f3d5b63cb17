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
        "url": "/v1/market/stream",
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | str | None:
    if response.status_code == 200:
        response_200 = response.text
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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | str]:
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

) -> Response[Problem | str]:
    """ Spot clearings, list price changes and book depth as Server-Sent
    Events (public). `event: clearing` at every auction, per market:
    `{gpu_model, region, clearing_index, unit_prices: {tflops_h, vram_h},
    volume: {tflops, vram}, at}`. `event: price` when the admin sets a list
    price: the price as `GET /v1/prices` shows it. `event: book` when a
    market's book changed, at most once a second per market: the market's
    entry as `GET /v1/market/book` shows it (an entry with no GPUs and no
    bids when it left the book). A comment line comes every 15 s. There is
    no replay: a client that falls 1,024 events behind is disconnected and
    reconnects (reading `GET /v1/market/book` for the current state).

    Args:
        gpu_model (str | Unset):
        region (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | str]
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

) -> Problem | str | None:
    """ Spot clearings, list price changes and book depth as Server-Sent
    Events (public). `event: clearing` at every auction, per market:
    `{gpu_model, region, clearing_index, unit_prices: {tflops_h, vram_h},
    volume: {tflops, vram}, at}`. `event: price` when the admin sets a list
    price: the price as `GET /v1/prices` shows it. `event: book` when a
    market's book changed, at most once a second per market: the market's
    entry as `GET /v1/market/book` shows it (an entry with no GPUs and no
    bids when it left the book). A comment line comes every 15 s. There is
    no replay: a client that falls 1,024 events behind is disconnected and
    reconnects (reading `GET /v1/market/book` for the current state).

    Args:
        gpu_model (str | Unset):
        region (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | str
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

) -> Response[Problem | str]:
    """ Spot clearings, list price changes and book depth as Server-Sent
    Events (public). `event: clearing` at every auction, per market:
    `{gpu_model, region, clearing_index, unit_prices: {tflops_h, vram_h},
    volume: {tflops, vram}, at}`. `event: price` when the admin sets a list
    price: the price as `GET /v1/prices` shows it. `event: book` when a
    market's book changed, at most once a second per market: the market's
    entry as `GET /v1/market/book` shows it (an entry with no GPUs and no
    bids when it left the book). A comment line comes every 15 s. There is
    no replay: a client that falls 1,024 events behind is disconnected and
    reconnects (reading `GET /v1/market/book` for the current state).

    Args:
        gpu_model (str | Unset):
        region (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | str]
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

) -> Problem | str | None:
    """ Spot clearings, list price changes and book depth as Server-Sent
    Events (public). `event: clearing` at every auction, per market:
    `{gpu_model, region, clearing_index, unit_prices: {tflops_h, vram_h},
    volume: {tflops, vram}, at}`. `event: price` when the admin sets a list
    price: the price as `GET /v1/prices` shows it. `event: book` when a
    market's book changed, at most once a second per market: the market's
    entry as `GET /v1/market/book` shows it (an entry with no GPUs and no
    bids when it left the book). A comment line comes every 15 s. There is
    no replay: a client that falls 1,024 events behind is disconnected and
    reconnects (reading `GET /v1/market/book` for the current state).

    Args:
        gpu_model (str | Unset):
        region (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | str
     """


    return (await asyncio_detailed(
        client=client,
gpu_model=gpu_model,
region=region,

    )).parsed
