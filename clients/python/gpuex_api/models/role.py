from enum import Enum

class Role(str, Enum):
    ADMIN = "admin"
    AGENT = "agent"
    BUYER = "buyer"
    PROVIDER = "provider"

    def __str__(self) -> str:
        return str(self.value)
