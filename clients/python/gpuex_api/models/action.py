from enum import Enum

class Action(str, Enum):
    BILLING_ADJUSTMENT = "billing_adjustment"
    CORDON_NODE = "cordon_node"
    CREDIT = "credit"
    DELETE_NODE = "delete_node"
    PUT_REGION = "put_region"
    SET_NODE = "set_node"
    SET_PRICE = "set_price"
    SET_ROLE = "set_role"
    UNCORDON_NODE = "uncordon_node"

    def __str__(self) -> str:
        return str(self.value)
