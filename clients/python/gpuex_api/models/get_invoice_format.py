from enum import Enum

class GetInvoiceFormat(str, Enum):
    HTML = "html"
    JSON = "json"

    def __str__(self) -> str:
        return str(self.value)
