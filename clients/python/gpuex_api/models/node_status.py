from enum import Enum

class NodeStatus(str, Enum):
    DECLARED = "declared"
    LOST = "lost"
    ONLINE = "online"
    QUARANTINED = "quarantined"

    def __str__(self) -> str:
        return str(self.value)
