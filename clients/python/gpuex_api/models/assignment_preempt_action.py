from enum import Enum

class AssignmentPreemptAction(str, Enum):
    PREEMPT = "preempt"

    def __str__(self) -> str:
        return str(self.value)
