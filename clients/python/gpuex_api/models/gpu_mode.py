from enum import Enum

class GpuMode(str, Enum):
    MIG = "mig"
    SHARED = "shared"
    WHOLE = "whole"

    def __str__(self) -> str:
        return str(self.value)
