from enum import Enum

class Qos(str, Enum):
    BATCH = "batch"
    REALTIME = "realtime"

    def __str__(self) -> str:
        return str(self.value)
