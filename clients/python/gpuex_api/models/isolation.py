from enum import Enum

class Isolation(str, Enum):
    ANY = "any"
    MIG = "mig"
    WHOLE = "whole"

    def __str__(self) -> str:
        return str(self.value)
