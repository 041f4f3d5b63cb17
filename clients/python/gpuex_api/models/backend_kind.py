from enum import Enum

class BackendKind(str, Enum):
    NVML = "nvml"
    SIMULATED = "simulated"

    def __str__(self) -> str:
        return str(self.value)
