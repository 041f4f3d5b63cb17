from enum import Enum

class OnInterrupt(str, Enum):
    RESTART = "restart"
    RESUME = "resume"

    def __str__(self) -> str:
        return str(self.value)
