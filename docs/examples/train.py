"""A small training loop that leaks: the stand-in for a user's train.py in the README's capture section.

Each step builds a batch and a scratch buffer, which are freed when the step ends (churn), and the metrics log
keeps a reference to a slice of every batch's features (the leak, the line marked "# the leak"), 4 MiB a step.
Run as the README says:  heaplens capture --out dumps -- python train.py
"""

import sys
import time

STEPS = int(sys.argv[1]) if len(sys.argv) > 1 else 100
LEAK_PER_STEP = 4 << 20  # bytes the metrics log keeps from each step
BATCH = 8 << 20  # bytes of each step's batch and scratch buffer, freed at the end of the step


class MetricsLog:
    def __init__(self):
        self.history = []

    def record(self, step, features):
        # keeps the features "for later plots": a copy of 4 MiB, every step, never dropped
        self.history.append((step, bytearray(features[:LEAK_PER_STEP])))  # the leak


def make_batch(step):
    batch = bytearray(BATCH)
    batch[0] = step % 256
    return batch


def train_step(step, log):
    batch = make_batch(step)
    scratch = bytearray(BATCH)  # freed with the step
    scratch[:16] = batch[:16]
    log.record(step, batch)


def main():
    log = MetricsLog()
    for step in range(STEPS):
        train_step(step, log)
        time.sleep(0.05)
    print(f"trained {STEPS} steps, kept {len(log.history)} records")


if __name__ == "__main__":
    main()
