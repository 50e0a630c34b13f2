"""Workloads whose GPU idle gaps have a known CPU cause, for the sampled CPU stacks (gcollect --sample=cpu).

  python3 cpu_gaps.py --mode loader [--steps N] [--workers W]   # DataLoader whose __getitem__ sleeps
  python3 cpu_gaps.py --mode item [--steps N]                   # .item() sync, then Python bookkeeping
  python3 cpu_gaps.py --mode train [--steps N] [--times FILE]   # a plain MLP training step, timed (overhead)

loader: each batch takes 8 x 2 ms in SlowDataset.__getitem__ (time.sleep) on the main thread (workers 0), while
the GPU has nothing queued: the gaps belong to __getitem__. item: every step reads loss.item() (the CPU waits for
the GPU), then spends ~3 ms in log_metrics (pure Python) before it launches the next step: the GPU idles in
log_metrics. train: prints the median step time (ms) for overhead comparisons (--times: each step's too).
"""
import argparse
import statistics
import time

import torch


class SlowDataset(torch.utils.data.Dataset):
    def __len__(self):
        return 1 << 20

    def __getitem__(self, i):
        time.sleep(0.002)  # the deliberate cause: a slow decode / augmentation
        return torch.full((256,), float(i % 7))


def log_metrics(history, value):
    # The deliberate cause: host bookkeeping after a sync, with nothing queued on the GPU.
    history.append(value)
    t = time.perf_counter()
    acc = 0.0
    while time.perf_counter() - t < 0.003:
        acc += sum(history[-50:]) / (len(history[-50:]) or 1)
    return acc


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", required=True, choices=["loader", "item", "train"])
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--times", default="", help="train: write each step's start (CLOCK_MONOTONIC ns) and "
                    "duration (ns), a line each (scripts/gpu/sampling_ab.py)")
    args = ap.parse_args()
    dev = torch.device("cuda")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(256, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 10)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    target = torch.randint(0, 10, (8,), device=dev)

    def step(batch, tgt):
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(model(batch), tgt)
        loss.backward()
        opt.step()
        return loss

    if args.mode == "loader":
        loader = torch.utils.data.DataLoader(SlowDataset(), batch_size=8, num_workers=args.workers)
        it = iter(loader)
        for s in range(args.steps):
            batch = next(it).to(dev, non_blocking=True)
            step(batch, target)
        torch.cuda.synchronize()
        print(f"cpu_gaps loader: {args.steps} steps, workers {args.workers}")
    elif args.mode == "item":
        data = torch.randn(8, 256, device=dev)
        history = []
        for s in range(args.steps):
            loss = step(data, target)
            log_metrics(history, loss.item())
        print(f"cpu_gaps item: {args.steps} steps, last loss {history[-1]:.4f}")
    else:
        data = torch.randn(64, 256, device=dev)
        target = torch.randint(0, 10, (64,), device=dev)
        for _ in range(20):
            step(data, target)
        torch.cuda.synchronize()
        times, starts = [], []
        for _ in range(args.steps):
            t0 = time.monotonic_ns()
            step(data, target)
            torch.cuda.synchronize()
            starts.append(t0)
            times.append((time.monotonic_ns() - t0) / 1e6)
        if args.times:
            with open(args.times, "w") as f:
                f.writelines(f"{t0} {int(ms * 1e6)}\n" for t0, ms in zip(starts, times))
        print(f"cpu_gaps train steps={args.steps} median_ms={statistics.median(times):.4f} min_ms={min(times):.4f}")


if __name__ == "__main__":
    main()
