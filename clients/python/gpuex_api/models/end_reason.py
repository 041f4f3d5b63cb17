from enum import Enum

class EndReason(str, Enum):
    DISK_QUOTA = "disk_quota"
    EXITED = "exited"
    LEASE_END = "lease_end"
    NODE_TIMEOUT = "node_timeout"
    PREEMPTED = "preempted"
    STOPPED = "stopped"

    def __str__(self) -> str:
        return str(self.value)
