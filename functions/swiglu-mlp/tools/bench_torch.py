#!/usr/bin/env python3
"""bench_torch.py — PyTorch eager and torch.compile SwiGLU gate/up timings for bench-swiglu-gpu.sh.

Times H = F.silu(x @ Wg.T) * (x @ Wu.T) (eager, and torch.compile with the token dimension
dynamic) for every Qwen-2.5 shape and token count, next to one torch/cuBLAS bf16 GEMM with the
same FLOPs (x @ [Wg; Wu].T) measured in the same run; mismatch rates against an fp64 reference
on sampled rows. Writes CSV rows with the columns of swiglu_gpu_bench (beyond_tol left empty:
the accumulation-noise tolerance is computed by the C++ reference only).

Exit status 0 also when PyTorch or a GPU is missing (it says so and writes no rows): the
Python part of the benchmark is optional.
"""
import argparse
import csv
import sys
import time

SHAPES = {
    "0.5B": (896, 4864),
    "1.5B": (1536, 8960),
    "3B": (2048, 11008),
    "7B": (3584, 18944),
    "14B": (5120, 13824),
    "32B": (5120, 27648),
    "72B": (8192, 29568),
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", default="all")
    ap.add_argument("--tokens", default="1,16,128,1024,4096")
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--sample-rows", type=int, default=4)
    ap.add_argument("--budget-s", type=float, default=200.0,
                    help="stop adding torch.compile rows after this many seconds")
    ap.add_argument("--csv", required=True)
    args = ap.parse_args()

    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        print("bench_torch.py: PyTorch is not installed here; skipping the eager and "
              "torch.compile rows (install torch to get them)", file=sys.stderr)
        return 0
    if not torch.cuda.is_available():
        print("bench_torch.py: PyTorch sees no CUDA device; skipping the PyTorch rows",
              file=sys.stderr)
        return 0

    names = list(SHAPES) if args.shapes == "all" else args.shapes.split(",")
    tokens = [int(t) for t in args.tokens.split(",")]
    dev = torch.device("cuda")
    start = time.monotonic()

    def eager(x, wg, wu):
        return F.silu(x @ wg.T) * (x @ wu.T)

    def time_us(fn, *a):
        for _ in range(max(2, args.iters // 5)):
            fn(*a)
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        s.record()
        for _ in range(args.iters):
            fn(*a)
        e.record()
        e.synchronize()
        return s.elapsed_time(e) * 1000.0 / args.iters

    def mismatch(out, ref):
        o, r = out.double(), ref.double()
        same = (o == r) | (torch.isnan(o) & torch.isnan(r))
        _, exp = torch.frexp(r.abs().clamp_min(2.0 ** -126))
        ulp = torch.ldexp(torch.ones_like(r), exp - 8)
        err = ((o - r).abs() / ulp).masked_fill(same, 0.0)
        return 1.0 - same.double().mean().item(), err.max().item()

    with open(args.csv, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")  # not \r\n: the script joins these rows with awk
        w.writerow(["shape", "tokens", "impl", "us", "tflops", "pct_cublas", "mismatch_rate",
                    "beyond_tol", "max_err_ulp"])
        for name in names:
            k, n = SHAPES[name]
            gen = torch.Generator(device=dev).manual_seed(1)
            wgu = (torch.randn(2 * n, k, device=dev, generator=gen) * 0.02).to(torch.bfloat16)
            wg, wu = wgu[:n], wgu[n:]
            compiled = torch.compile(eager)
            for m in tokens:
                x = torch.randn(m, k, device=dev, generator=gen).to(torch.bfloat16)
                rows = sorted({r * m // min(args.sample_rows, m)
                               for r in range(min(args.sample_rows, m))})
                xs = x[rows].double()
                g, u = xs @ wg.double().T, xs @ wu.double().T
                ref = (F.silu(g) * u).to(torch.bfloat16)  # torch rounds fp64 -> bf16 itself
                flops = 4.0 * m * n * k
                gemm_us = time_us(lambda a, b: a @ b.T, x, wgu)
                gemm_tflops = flops / (gemm_us * 1e-6) / 1e12
                w.writerow([name, m, "torch-gemm-2N (reference)", f"{gemm_us:.3f}",
                            f"{gemm_tflops:.3f}", "100.00", "", "", ""])
                impls = [("torch-eager", eager)]
                if time.monotonic() - start < args.budget_s:
                    torch._dynamo.mark_dynamic(x, 0)
                    impls.append(("torch-compile", compiled))
                else:
                    print(f"bench_torch.py: time budget spent, no torch.compile row for "
                          f"{name} M={m}", file=sys.stderr)
                for impl, fn in impls:
                    us = time_us(fn, x, wg, wu)
                    out = fn(x, wg, wu)
                    rate, max_ulp = mismatch(out[rows], ref)
                    tflops = flops / (us * 1e-6) / 1e12
                    w.writerow([name, m, impl, f"{us:.3f}", f"{tflops:.3f}",
                                f"{100.0 * tflops / gemm_tflops:.2f}", f"{rate:.6f}", "",
                                f"{max_ulp:.3f}"])
                f.flush()
                print(f"bench_torch.py: {name} M={m} done ({time.monotonic() - start:.0f} s)",
                      file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
