"""A PyTorch model run through a CUDA graph (torch.cuda.graph capture, then replays), the way inference
servers and torch.compile(mode="reduce-overhead") run models. Under `gcollect --counters` the graph's kernels
must be profiled (replayed node by node) and the app's results must not change: the script compares every
replay with the eager model and exits 1 on a mismatch.

    gcollect --counters -o torch_graph.gtrace -- python3 torch_cuda_graph.py
"""
import sys

import torch

torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.Linear(512, 1024), torch.nn.GELU(), torch.nn.Linear(1024, 1024), torch.nn.GELU(),
    torch.nn.Linear(1024, 512)).cuda().eval()
static_in = torch.randn(64, 512, device="cuda")
state = torch.zeros(64, 512, device="cuda")  # accumulates across replays: a second run of a graph shows

with torch.no_grad():
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm up on a side stream, as torch.cuda.graph requires
        for _ in range(2):
            model(static_in)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_out = model(static_in)
        state.add_(static_out)
    state.zero_()

    expected = torch.zeros_like(state)
    replays = 4
    ok = True
    for i in range(replays):
        static_in.copy_(torch.randn(64, 512, device="cuda"))
        want = model(static_in)
        expected += want
        graph.replay()
        torch.cuda.synchronize()
        if not torch.allclose(static_out, want, rtol=1e-3, atol=1e-3):
            print(f"replay {i}: output differs from the eager model", file=sys.stderr)
            ok = False
    if not torch.allclose(state, expected, rtol=1e-3, atol=1e-3):
        print("accumulated state differs: a graph ran more or fewer times than launched", file=sys.stderr)
        ok = False
print(f"torch_cuda_graph: {replays} replays, results match the eager model: {ok}")
sys.exit(0 if ok else 1)
