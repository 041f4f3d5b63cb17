from enum import Enum

class Method(str, Enum):
    ETS = "ets"
    MSTL = "mstl"
    RECENT_MEAN = "recent_mean"

    def __str__(self) -> str:
        return str(self.value)
