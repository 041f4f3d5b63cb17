from enum import Enum

class PartitionType0Kind(str, Enum):
    MIG = "mig"

    def __str__(self) -> str:
        return str(self.value)
