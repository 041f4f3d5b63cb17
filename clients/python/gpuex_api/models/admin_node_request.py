from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.review_decision import ReviewDecision
from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="AdminNodeRequest")



@_attrs_define
class AdminNodeRequest:
    """ What an admin sets on a node; at least one field.

        Attributes:
            review (None | ReviewDecision | Unset):
            simulated (bool | None | Unset): Whether the node's agent may register with the `simulated` backend
                (for the demo, tests and load tests; refused on any other node).
     """

    review: None | ReviewDecision | Unset = UNSET
    simulated: bool | None | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        review: None | str | Unset
        if isinstance(self.review, Unset):
            review = UNSET
        elif isinstance(self.review, ReviewDecision):
            review = self.review.value
        else:
            review = self.review

        simulated: bool | None | Unset
        if isinstance(self.simulated, Unset):
            simulated = UNSET
        else:
            simulated = self.simulated


        field_dict: dict[str, Any] = {}

        field_dict.update({
        })
        if review is not UNSET:
            field_dict["review"] = review
        if simulated is not UNSET:
            field_dict["simulated"] = simulated

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        def _parse_review(data: object) -> None | ReviewDecision | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                review_type_1 = ReviewDecision(data)



                return review_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | ReviewDecision | Unset, data)

        review = _parse_review(d.pop("review", UNSET))


        def _parse_simulated(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        simulated = _parse_simulated(d.pop("simulated", UNSET))


        admin_node_request = cls(
            review=review,
            simulated=simulated,
        )

        return admin_node_request

