-- Buyers' registry credentials (DESIGN §21), apart from the order's request
-- and sealed with the server's secrets key, the order id bound in; removed
-- once the order can start no lease again.
CREATE TABLE order_pull_secrets (
    order_id   BLOB PRIMARY KEY,
    sealed     TEXT NOT NULL,
    created_at TEXT NOT NULL
);
