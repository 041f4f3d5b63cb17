from enum import Enum

class ProfileSource(str, Enum):
    BODY = "body"
    HISTORY = "history"

    def __str__(self) -> str:
        return str(self.value)
