from enum import Enum

class Precision(str, Enum):
    BF16 = "bf16"
    FP16 = "fp16"
    FP8 = "fp8"
    TF32 = "tf32"

    def __str__(self) -> str:
        return str(self.value)
