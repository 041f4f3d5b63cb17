from enum import Enum

class ImportFormat(str, Enum):
    CSV = "csv"
    K8S = "k8s"
    SLURM = "slurm"

    def __str__(self) -> str:
        return str(self.value)
