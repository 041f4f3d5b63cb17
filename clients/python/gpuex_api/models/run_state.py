from enum import Enum

class RunState(str, Enum):
    FAILED = "failed"
    PASSED = "passed"
    PENDING = "pending"
    REFUSED = "refused"
    RUNNING = "running"

    def __str__(self) -> str:
        return str(self.value)
