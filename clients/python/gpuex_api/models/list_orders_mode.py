from enum import Enum

class ListOrdersMode(str, Enum):
    ON_DEMAND = "on_demand"
    POOLED = "pooled"
    RESERVED = "reserved"
    SPOT = "spot"

    def __str__(self) -> str:
        return str(self.value)
