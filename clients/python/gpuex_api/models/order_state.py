from enum import Enum

class OrderState(str, Enum):
    CANCELLED = "cancelled"
    EXPIRED = "expired"
    FILLED = "filled"
    OPEN = "open"
    REJECTED = "rejected"

    def __str__(self) -> str:
        return str(self.value)
