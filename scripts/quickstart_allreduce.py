#!/usr/bin/env python3
"""A small torch.distributed job for docs/quickstart.md: every rank runs AllReduce of 1 KiB to
64 MiB in a loop for --seconds, checks each result, and rank 0 prints one line per round.

  torchrun --nproc-per-node N scripts/quickstart_allreduce.py [--seconds S]

--one-gpu: all ranks share GPU 0, each with its own NCCL_HOSTID (NCCL then treats them as
separate hosts), for a machine with fewer GPUs than ranks."""
import argparse
import os
import time

import torch
import torch.distributed as dist


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--one-gpu", action="store_true")
    a = ap.parse_args()
    local = int(os.environ.get("LOCAL_RANK", "0"))
    if a.one_gpu:
        os.environ["NCCL_HOSTID"] = "quickstart-%s" % os.environ.get("RANK", "0")
        torch.cuda.set_device(0)
    else:
        torch.cuda.set_device(local)
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    if rank == 0:
        print("quickstart: %d ranks, NCCL %s" % (world, ".".join(map(str, torch.cuda.nccl.version()))),
              flush=True)
    end = time.time() + a.seconds
    rounds = 0
    while True:
        for shift in range(10, 27, 2):  # 1 KiB .. 64 MiB
            n = (1 << shift) // 4
            x = torch.full((n,), float(rank + 1), device="cuda")
            dist.all_reduce(x)
            want = world * (world + 1) / 2
            if x[0].item() != want or x[-1].item() != want:
                raise SystemExit("quickstart: wrong AllReduce result at %d bytes" % (n * 4))
        rounds += 1
        # every rank decides from rank 0's clock, so all stop after the same round
        stop = torch.tensor([1.0 if time.time() >= end else 0.0], device="cuda")
        dist.broadcast(stop, 0)
        if rank == 0:
            print("quickstart: round %d done" % rounds, flush=True)
        if stop.item():
            break
    dist.destroy_process_group()
    if rank == 0:
        print("quickstart: %d rounds, all results correct" % rounds, flush=True)


if __name__ == "__main__":
    main()
