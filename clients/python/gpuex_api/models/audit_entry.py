from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.action import Action
from ..types import UNSET, Unset
from dateutil.parser import isoparse
from typing import cast
from uuid import UUID
import datetime

if TYPE_CHECKING:
  from ..models.audit_entry_details import AuditEntryDetails





T = TypeVar("T", bound="AuditEntry")



@_attrs_define
class AuditEntry:
    """ One admin action.

        Attributes:
            action (Action): What an admin did.
            created_at (datetime.datetime):
            details (AuditEntryDetails): The change itself, as the action recorded it (a JSON object whose fields depend on
                `action`).
            id (int):
            target (str): What was changed, e.g. `price:eu-west:H100-SXM:tflops_h` or `node:<id>`.
            actor_email (None | str | Unset): The actor's email; absent when the account is gone.
            actor_id (None | Unset | UUID):
     """

    action: Action
    created_at: datetime.datetime
    details: AuditEntryDetails
    id: int
    target: str
    actor_email: None | str | Unset = UNSET
    actor_id: None | Unset | UUID = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.audit_entry_details import AuditEntryDetails
        action = self.action.value

        created_at = self.created_at.isoformat()

        details = self.details.to_dict()

        id = self.id

        target = self.target

        actor_email: None | str | Unset
        if isinstance(self.actor_email, Unset):
            actor_email = UNSET
        else:
            actor_email = self.actor_email

        actor_id: None | str | Unset
        if isinstance(self.actor_id, Unset):
            actor_id = UNSET
        elif isinstance(self.actor_id, UUID):
            actor_id = str(self.actor_id)
        else:
            actor_id = self.actor_id


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "action": action,
            "created_at": created_at,
            "details": details,
            "id": id,
            "target": target,
        })
        if actor_email is not UNSET:
            field_dict["actor_email"] = actor_email
        if actor_id is not UNSET:
            field_dict["actor_id"] = actor_id

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.audit_entry_details import AuditEntryDetails
        d = dict(src_dict)
        action = Action(d.pop("action"))




        created_at = isoparse(d.pop("created_at"))




        details = AuditEntryDetails.from_dict(d.pop("details"))




        id = d.pop("id")

        target = d.pop("target")

        def _parse_actor_email(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        actor_email = _parse_actor_email(d.pop("actor_email", UNSET))


        def _parse_actor_id(data: object) -> None | Unset | UUID:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                actor_id_type_0 = UUID(data)



                return actor_id_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | UUID, data)

        actor_id = _parse_actor_id(d.pop("actor_id", UNSET))


        audit_entry = cls(
            action=action,
            created_at=created_at,
            details=details,
            id=id,
            target=target,
            actor_email=actor_email,
            actor_id=actor_id,
        )


        audit_entry.additional_properties = d
        return audit_entry

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
