-- Spot market history (DESIGN §9 `GET /v1/market/history`): one row per
-- (model, region, period, bucket), open/high/low/close of the clearing index
-- and of the unit prices a winner at that index pays, and the units won.
-- The market task keeps the current buckets in memory and upserts them with
-- each batch: SQLite keeps decimals as TEXT, so max/min are taken in Rust.
CREATE TABLE market_history (
    gpu_model      TEXT NOT NULL,
    region         TEXT NOT NULL,
    period         TEXT NOT NULL,
    bucket_start   TEXT NOT NULL,
    open_index     TEXT NOT NULL,
    high_index     TEXT NOT NULL,
    low_index      TEXT NOT NULL,
    close_index    TEXT NOT NULL,
    open_tflops_h  TEXT NOT NULL,
    high_tflops_h  TEXT NOT NULL,
    low_tflops_h   TEXT NOT NULL,
    close_tflops_h TEXT NOT NULL,
    open_vram_h    TEXT NOT NULL,
    high_vram_h    TEXT NOT NULL,
    low_vram_h     TEXT NOT NULL,
    close_vram_h   TEXT NOT NULL,
    volume_tflops  TEXT NOT NULL,
    volume_vram    TEXT NOT NULL,
    auctions       INTEGER NOT NULL,
    PRIMARY KEY (gpu_model, region, period, bucket_start)
);
