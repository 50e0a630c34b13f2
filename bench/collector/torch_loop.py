"""A PyTorch loop of small ops, timed per iteration (ms, median), for collector overhead.

  python3 torch_loop.py [--mode plain|profiler] [--iters N] [--train] [--times FILE]

--mode profiler wraps the timed loop in torch.profiler (CPU + CUDA activities) and also reports how long leaving
the profiler block took. Under gcollect, run --mode plain. --times writes each timed iteration's start
(CLOCK_MONOTONIC ns) and duration (ns), a line each, for scripts/gpu/sampling_ab.py. --train runs a tiny MLP training loop instead
(forward, backward, optimizer step) and is what the GPU suite traces for correctness checks.
"""
import argparse
import statistics
import sys
import time

import torch


def small_ops_step(x, w):
    # ~48 small kernels: elementwise chains and tiny matmuls.
    for _ in range(8):
        y = torch.mm(x, w)
        y = torch.relu(y) + 1.0
        y = y * 0.5 - x
        x = torch.tanh(y)
        x = x / (x.abs().sum() + 1.0)
        x = x.contiguous()
    return x


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", default="plain", choices=["plain", "profiler"])
    ap.add_argument("--iters", type=int, default=300)
    ap.add_argument("--warmup", type=int, default=30)
    ap.add_argument("--train", action="store_true")
    ap.add_argument("--times", default="")
    args = ap.parse_args()
    dev = torch.device("cuda")

    if args.train:
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10)).to(dev)
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        data = torch.randn(64, 256, device=dev)
        target = torch.randint(0, 10, (64,), device=dev)
        for step in range(args.iters):
            torch.cuda.nvtx.range_push(f"step {step}")
            opt.zero_grad(set_to_none=True)
            loss = torch.nn.functional.cross_entropy(model(data), target)
            loss.backward()
            opt.step()
            torch.cuda.nvtx.range_pop()
        torch.cuda.synchronize()
        print(f"torch_train: {args.iters} steps, loss {loss.item():.4f}")
        return 0

    x = torch.randn(64, 64, device=dev)
    w = torch.randn(64, 64, device=dev)
    for _ in range(args.warmup):
        small_ops_step(x, w)
    torch.cuda.synchronize()

    starts = []

    def timed():
        times = []
        for _ in range(args.iters):
            t0 = time.monotonic_ns()
            small_ops_step(x, w)
            torch.cuda.synchronize()
            starts.append(t0)
            times.append((time.monotonic_ns() - t0) / 1e6)
        return times

    exit_s = 0.0
    if args.mode == "profiler":
        from torch.profiler import ProfilerActivity, profile

        # As users run it: CPU + CUDA activities, default options (no schedule, no shapes/stacks/memory), the
        # whole timed loop inside the block; leaving the block (trace processing) is timed separately.
        prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
        prof.__enter__()
        times = timed()
        t0 = time.perf_counter()
        prof.__exit__(None, None, None)
        exit_s = time.perf_counter() - t0
        n_cuda = sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)
        print(f"torch_loop profiler cuda_events={n_cuda}")
    else:
        times = timed()
    if args.times:
        with open(args.times, "w") as f:
            f.writelines(f"{t0} {int(ms * 1e6)}\n" for t0, ms in zip(starts, times))
    print(f"torch_loop mode={args.mode} iters={args.iters} median_ms={statistics.median(times):.4f} "
          f"min_ms={min(times):.4f} profiler_exit_s={exit_s:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
