from enum import Enum

class ProfileSource(str, Enum):
    BODY = "body"
    HISTORY = "history"
    IMPORT = "import"

    def __str__(self) -> str:
        return str(self.value)
