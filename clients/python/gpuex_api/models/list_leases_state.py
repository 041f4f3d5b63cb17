from enum import Enum

class ListLeasesState(str, Enum):
    ENDED = "ended"
    FAILED = "failed"
    PENDING = "pending"
    PREEMPTING = "preempting"
    PROVISIONING = "provisioning"
    RUNNING = "running"

    def __str__(self) -> str:
        return str(self.value)
