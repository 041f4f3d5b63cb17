from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from dateutil.parser import isoparse
from typing import cast
from uuid import UUID
import datetime






T = TypeVar("T", bound="ListingRequest")



@_attrs_define
class ListingRequest:
    """ A listing of the tail of a reserved lease's window.

        Attributes:
            ask_per_hour (str): Money: a decimal string (no JSON number, no exponent), above 0 and below 1000000, with at
                most 6 decimals. Kept and answered at 6 decimals at most.
            from_ (datetime.datetime): A whole hour inside the lease's window, at least the notice period
                (default 120 s) ahead and an hour before the window ends.
            lease_id (UUID): The caller's reserved lease.
     """

    ask_per_hour: str
    from_: datetime.datetime
    lease_id: UUID





    def to_dict(self) -> dict[str, Any]:
        ask_per_hour = self.ask_per_hour

        from_ = self.from_.isoformat()

        lease_id = str(self.lease_id)


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "ask_per_hour": ask_per_hour,
            "from": from_,
            "lease_id": lease_id,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        ask_per_hour = d.pop("ask_per_hour")

        from_ = isoparse(d.pop("from"))




        lease_id = UUID(d.pop("lease_id"))




        listing_request = cls(
            ask_per_hour=ask_per_hour,
            from_=from_,
            lease_id=lease_id,
        )

        return listing_request

