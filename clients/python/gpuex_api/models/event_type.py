from enum import Enum

class EventType(str, Enum):
    BUDGET_NOTICE = "budget.notice"
    FUNDS_LOW = "funds.low"
    LEASE_CONVERTED = "lease.converted"
    LEASE_ENDED = "lease.ended"
    LEASE_PREEMPT_NOTICE = "lease.preempt_notice"
    LEASE_REBALANCE = "lease.rebalance"
    LEASE_RUNNING = "lease.running"
    LISTING_CANCELLED = "listing.cancelled"
    LISTING_CREATED = "listing.created"
    LISTING_EXPIRED = "listing.expired"
    LISTING_SOLD = "listing.sold"
    ORDER_ACCEPTED = "order.accepted"
    ORDER_CANCELLED = "order.cancelled"
    ORDER_EXPIRED = "order.expired"
    ORDER_FILLED = "order.filled"
    ORDER_REJECTED = "order.rejected"
    ORDER_REQUEUED = "order.requeued"

    def __str__(self) -> str:
        return str(self.value)
