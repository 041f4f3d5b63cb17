#!/usr/bin/env python3
"""A stand-in training job for the gpuex quick start.

It ships to a lease as an artifact (fetched by the agent into the lease's
working folder and checked against its sha256), then "trains" a one-weight
linear model by gradient descent on a synthetic data set, printing one line
per epoch and writing a checkpoint into its working folder. Standard library
only, so it runs under any launcher without an image.
"""

import argparse
import json
import os
import random
import time


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=int(os.environ.get("EPOCHS", "5")))
    parser.add_argument("--step-s", type=float, default=1.0, help="seconds per epoch")
    args = parser.parse_args()

    print(f"device={os.environ.get('CUDA_VISIBLE_DEVICES', 'none')} uid={os.getuid()} cwd={os.getcwd()}", flush=True)
    rng = random.Random(7)
    data = [(x, 3.0 * x + 1.0 + rng.gauss(0, 0.1)) for x in (rng.uniform(-1, 1) for _ in range(256))]
    w, b, lr = 0.0, 0.0, 0.5
    for epoch in range(1, args.epochs + 1):
        gw = sum(2 * (w * x + b - y) * x for x, y in data) / len(data)
        gb = sum(2 * (w * x + b - y) for x, y in data) / len(data)
        w, b = w - lr * gw, b - lr * gb
        loss = sum((w * x + b - y) ** 2 for x, y in data) / len(data)
        print(f"epoch {epoch}/{args.epochs} loss={loss:.4f} w={w:.3f} b={b:.3f}", flush=True)
        with open("checkpoint.json", "w") as f:
            json.dump({"epoch": epoch, "w": w, "b": b}, f)
        time.sleep(args.step_s)
    print("training done", flush=True)


if __name__ == "__main__":
    main()
