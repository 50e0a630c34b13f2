"""One PyTorch training loop under four recorders, for gtrace.profile's overhead and behaviour (GPU machine).

  python3 bench/python/profile_loop.py MODE [--steps N] [--out PATH]

MODE: plain (nothing records), gtrace (gtrace.profile with a schedule: wait 2, warmup 2, active N-4),
gtrace-all (every step recorded), torch (torch.profiler with the same schedule, CUDA activities), restart
(gtrace.start/stop twice in one process), nested (a profile inside a profile must raise), second-client
(gtrace.profile while torch.profiler holds CUPTI: must raise a clear error).
Prints one line `RESULT mode=... active_step_ms=... steps=...`: the median time of the steps the schedule
records (the same steps in every mode), so the modes compare like for like.
"""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
import torch  # noqa: E402

import gtrace  # noqa: E402

WAIT, WARMUP = 2, 2


def build():
    torch.manual_seed(0)
    dev = torch.device("cuda")
    layers = torch.nn.ModuleList(
        torch.nn.TransformerEncoderLayer(512, 8, 2048, dropout=0.1, batch_first=True) for _ in range(6))
    model = torch.nn.Sequential(torch.nn.Embedding(1000, 512), *layers, torch.nn.Linear(512, 1000)).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    tokens = torch.randint(0, 1000, (16, 256), device=dev)
    target = torch.randint(0, 1000, (16, 256), device=dev)

    def step():
        with gtrace.range("step"):
            opt.zero_grad(set_to_none=True)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = torch.nn.functional.cross_entropy(model(tokens).flatten(0, 1), target.flatten())
            loss.backward()
            opt.step()
        torch.cuda.synchronize()

    return step


def timed_loop(step, steps, on_step=None):
    times = []
    for i in range(steps):
        t0 = time.perf_counter()
        step()
        times.append((time.perf_counter() - t0) * 1e3)
        if on_step:
            on_step()
    active = times[WAIT + WARMUP:]
    return statistics.median(active)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode")
    ap.add_argument("--steps", type=int, default=24)
    ap.add_argument("--out", default="/tmp/profile_loop.gtrace")
    a = ap.parse_args()
    step = build()
    step()  # CUDA, cuBLAS and the allocator warm before any recorder
    sched = gtrace.schedule(wait=WAIT, warmup=WARMUP, active=a.steps - WAIT - WARMUP)
    if a.mode == "plain":
        ms = timed_loop(step, a.steps)
    elif a.mode in ("gtrace", "gtrace-all"):
        with gtrace.profile(a.out, schedule=sched if a.mode == "gtrace" else None) as p:
            ms = timed_loop(step, a.steps, p.step)
        print("wrote", a.out, os.path.getsize(a.out), "bytes") if os.path.exists(a.out) else print("no", a.out)
    elif a.mode == "torch":
        from torch.profiler import ProfilerActivity, profile, schedule

        ts = schedule(wait=WAIT, warmup=WARMUP, active=a.steps - WAIT - WARMUP)
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], schedule=ts,
                     on_trace_ready=lambda p: p.export_chrome_trace(a.out + ".json")) as p:
            ms = timed_loop(step, a.steps, p.step)
    elif a.mode == "restart":
        gtrace.start(a.out + ".1")
        for _ in range(3):
            step()
        gtrace.stop()
        print("state after stop:", gtrace.recording_state())
        for _ in range(2):
            step()  # not recorded
        gtrace.start(a.out + ".2", trace="kernel,nvtx")
        for _ in range(4):
            step()
        gtrace.stop()
        ms = 0.0
    elif a.mode == "nested":
        with gtrace.profile(a.out):
            try:
                with gtrace.profile(a.out + ".inner"):
                    pass
                print("NESTED-DID-NOT-RAISE")
            except gtrace.ProfileError as e:
                print("nested refused:", e)
            step()
        ms = 0.0
    elif a.mode == "second-client":
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CUDA]):
            step()
            try:
                with gtrace.profile(a.out):
                    step()
                print("SECOND-CLIENT-DID-NOT-RAISE")
            except gtrace.ProfileError as e:
                print("second client refused:", e)
        ms = 0.0
    else:
        sys.exit(f"unknown mode {a.mode}")
    print(f"RESULT mode={a.mode} active_step_ms={ms:.3f} steps={a.steps}")


if __name__ == "__main__":
    main()
