from enum import Enum

class StatusReportFailedStatus(str, Enum):
    FAILED = "failed"

    def __str__(self) -> str:
        return str(self.value)
