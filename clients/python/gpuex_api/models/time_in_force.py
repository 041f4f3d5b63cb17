from enum import Enum

class TimeInForce(str, Enum):
    FOK = "fok"
    GTC = "gtc"
    GTT = "gtt"
    IOC = "ioc"

    def __str__(self) -> str:
        return str(self.value)
