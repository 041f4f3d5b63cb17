from enum import Enum

class LeaseRunState(str, Enum):
    ENDED = "ended"
    PROVISIONING = "provisioning"
    RUNNING = "running"
    STOPPING = "stopping"

    def __str__(self) -> str:
        return str(self.value)
