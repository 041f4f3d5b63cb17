from enum import Enum

class RegisteredRole(str, Enum):
    BUYER = "buyer"
    PROVIDER = "provider"

    def __str__(self) -> str:
        return str(self.value)
