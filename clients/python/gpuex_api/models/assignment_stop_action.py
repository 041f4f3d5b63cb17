from enum import Enum

class AssignmentStopAction(str, Enum):
    STOP = "stop"

    def __str__(self) -> str:
        return str(self.value)
