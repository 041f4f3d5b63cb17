from enum import Enum

class ExportFormat(str, Enum):
    CSV = "csv"
    FOCUS_CSV = "focus-csv"
    FOCUS_JSON = "focus-json"

    def __str__(self) -> str:
        return str(self.value)
