from enum import Enum

class PartitionType2Kind(str, Enum):
    WHOLE = "whole"

    def __str__(self) -> str:
        return str(self.value)
