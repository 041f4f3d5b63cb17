from enum import Enum

class AccountRole(str, Enum):
    ADMIN = "admin"
    BUYER = "buyer"
    PROVIDER = "provider"

    def __str__(self) -> str:
        return str(self.value)
