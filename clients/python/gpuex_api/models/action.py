from enum import Enum

class Action(str, Enum):
    BILLING_ADJUSTMENT = "billing_adjustment"
    CORDON_NODE = "cordon_node"
    CREDIT = "credit"
    PUT_REGION = "put_region"
    SET_PRICE = "set_price"
    UNCORDON_NODE = "uncordon_node"

    def __str__(self) -> str:
        return str(self.value)
