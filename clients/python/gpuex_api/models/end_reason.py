from enum import Enum

class EndReason(str, Enum):
    EXITED = "exited"
    LEASE_END = "lease_end"
    NODE_TIMEOUT = "node_timeout"
    PREEMPTED = "preempted"
    STOPPED = "stopped"

    def __str__(self) -> str:
        return str(self.value)
