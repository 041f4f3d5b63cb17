from enum import Enum

class ReviewDecision(str, Enum):
    ACCEPT = "accept"

    def __str__(self) -> str:
        return str(self.value)
