from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.profile_import import ProfileImport





T = TypeVar("T", bound="ProfileImportList")



@_attrs_define
class ProfileImportList:
    """ One page of a caller's imports, newest first.

        Attributes:
            imports (list[ProfileImport]):
     """

    imports: list[ProfileImport]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.profile_import import ProfileImport
        imports = []
        for imports_item_data in self.imports:
            imports_item = imports_item_data.to_dict()
            imports.append(imports_item)




        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "imports": imports,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.profile_import import ProfileImport
        d = dict(src_dict)
        imports = []
        _imports = d.pop("imports")
        for imports_item_data in (_imports):
            imports_item = ProfileImport.from_dict(imports_item_data)



            imports.append(imports_item)


        profile_import_list = cls(
            imports=imports,
        )


        profile_import_list.additional_properties = d
        return profile_import_list

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
