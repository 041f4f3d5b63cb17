from enum import Enum

class PartitionType1Kind(str, Enum):
    SHARED = "shared"

    def __str__(self) -> str:
        return str(self.value)
