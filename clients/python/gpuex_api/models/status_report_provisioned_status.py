from enum import Enum

class StatusReportProvisionedStatus(str, Enum):
    PROVISIONED = "provisioned"

    def __str__(self) -> str:
        return str(self.value)
