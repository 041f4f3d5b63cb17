from enum import Enum

class StatusReportEndedStatus(str, Enum):
    ENDED = "ended"

    def __str__(self) -> str:
        return str(self.value)
