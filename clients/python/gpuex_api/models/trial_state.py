from enum import Enum

class TrialState(str, Enum):
    DONE = "done"
    RUNNING = "running"

    def __str__(self) -> str:
        return str(self.value)
