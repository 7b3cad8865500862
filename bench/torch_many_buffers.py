#!/usr/bin/env python3
"""The many-buffers case in PyTorch, for comparison with `commplan-bench many` in the same run.

200 all-reduces (sum, in place) of 256 float32 each on one GPU, one rank of torch.distributed's NCCL
backend (world size 1, FileStore rendezvous, no gloo), timed per step as the Java tool does: issue,
then torch.cuda.synchronize(); 5 warm-up steps, then the median of 50. Prints one line for each of

  separate     200 dist.all_reduce calls
  coalesced    the same inside torch.distributed.distributed_c10d._coalescing_manager
  flat         one dist.all_reduce over one tensor of 51,200 floats

Run on the GPU machine:  python3 bench/torch_many_buffers.py [--buffers 200] [--count 256] [--iters 50]
"""
import argparse
import os
import statistics
import tempfile
import time

import torch
import torch.distributed as dist
from torch.distributed.distributed_c10d import _coalescing_manager


def time_steps(step, iters, warmup):
    for _ in range(warmup):
        step()
        torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        t0 = time.perf_counter()
        step()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e6)
    return statistics.median(times), min(times)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--buffers", type=int, default=200)
    p.add_argument("--count", type=int, default=256)
    p.add_argument("--iters", type=int, default=50)
    p.add_argument("--warmup", type=int, default=5)
    a = p.parse_args()

    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    device = torch.device("cuda", 0)
    torch.cuda.set_device(device)
    store_file = tempfile.NamedTemporaryFile(prefix="torch_many_buffers_", delete=False).name
    store = dist.FileStore(store_file, 1)
    dist.init_process_group("nccl", store=store, rank=0, world_size=1, device_id=device)
    try:
        tensors = [torch.ones(a.count, dtype=torch.float32, device=device) for _ in range(a.buffers)]
        flat = torch.ones(a.buffers * a.count, dtype=torch.float32, device=device)

        def separate():
            for t in tensors:
                dist.all_reduce(t)

        def coalesced():
            with _coalescing_manager(device=device, async_ops=True) as cm:
                for t in tensors:
                    dist.all_reduce(t)
            cm.wait()

        def one_flat():
            dist.all_reduce(flat)

        print(f"# torch {torch.__version__}, NCCL {'.'.join(map(str, torch.cuda.nccl.version()))}, "
              f"{torch.cuda.get_device_name(device)}, 1 rank, {a.buffers} x {a.count} float32 all-reduce sum "
              f"in place, time per step (us): median of {a.iters}, min")
        for name, step in (("separate", separate), ("coalesced", coalesced), ("flat", one_flat)):
            median, low = time_steps(step, a.iters, a.warmup)
            print(f"torch {name:9s} calls {1 if name == 'flat' else a.buffers:4d}  median {median:9.1f} us  min {low:9.1f} us")
    finally:
        dist.destroy_process_group()
        os.unlink(store_file)


if __name__ == "__main__":
    main()
