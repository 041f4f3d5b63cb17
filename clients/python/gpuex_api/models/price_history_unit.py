from enum import Enum

class PriceHistoryUnit(str, Enum):
    TFLOPS_H = "tflops_h"
    VRAM_H = "vram_h"

    def __str__(self) -> str:
        return str(self.value)
