#!/usr/bin/env python3
"""Times the kernels a transformer training step is made of on one NVIDIA GPU.

Runs on a machine with a CUDA GPU and PyTorch (nothing else); writes one CSV row per kernel:

    python3 share/validation/kernels/measure.py --out h100-sxm-80gb.csv [--only gemm,fp8,...]

What it times (every figure is device time per kernel, the median of timed CUDA-graph replays,
so the host's issue time is not in it; see share/validation/kernels/README.md):
  gemm   BF16 GEMMs of the layers of the validated models (GPT 1.7B-175B, Llama 3 8B/70B) at
         their tensor-parallel widths: forward (x·Wᵀ), input gradient (dy·W) and weight gradient
         (dyᵀ·x), in the layouts Megatron-LM's linear layers use; square GEMMs 256-16384; the
         unfused attention's batched GEMMs (scores and context).
  fp8    the forward GEMMs again as FP8 (e4m3 × e4m3, per-tensor scales, BF16 out) through
         torch._scaled_mm, with fast accumulation as Transformer Engine's forward pass uses it,
         and a few without.
  vector memory-bound kernels at three sizes: copy, add, GELU (erf and tanh) and its backward,
         SiLU and its backward, dropout and its backward, LayerNorm forward and backward,
         RMSNorm forward, softmax forward and backward, cross-entropy, fused Adam.
  flash  FlashAttention (scaled_dot_product_attention, flash backend, causal), forward, and
         forward plus backward.
  tiny   a 4,096-element add and a 128³ GEMM: the per-kernel floor (launch, ramp, tail).

Operands rotate over enough copies to exceed three times the L2 cache, so a kernel reads HBM as
it would in training, not a cache warmed by the previous repetition. Inputs are random (never
zeros: they run faster than real data). The GPU's clocks, power limit and temperature are read
before and after (nvidia-smi) and written as comment lines; nothing of the card is changed.
"""
import argparse
import math
import statistics
import subprocess
import sys
import time

import torch
import torch.nn.functional as F

COLUMNS = ["section", "kernel", "dtype", "batch", "m", "n", "k", "elements", "row",
           "bytes", "flops", "seconds", "reps", "note"]


def smi(fields):
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=" + fields, "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=20).stdout.strip()
    except Exception as e:  # noqa: BLE001 - a reading, not a requirement
        return "nvidia-smi failed: %s" % e


SMI_FIELDS = ("name,clocks.sm,clocks.max.sm,clocks.mem,power.draw,power.limit,"
              "enforced.power.limit,temperature.gpu,clocks_throttle_reasons.active")


class Timer:
    """Device seconds per call of fn(i) (i picks the operand copy), by CUDA-graph replay."""

    def __init__(self, target_s=0.02, replays=5):
        self.target_s = target_s
        self.replays = replays
        self.stream = torch.cuda.Stream()

    def __call__(self, fn, copies, guess_s):
        reps = max(3, min(64, int(self.target_s / max(guess_s, 1e-6))))
        # Warm up outside the graph (cuBLAS handles, workspaces, autotuning).
        with torch.cuda.stream(self.stream):
            for i in range(min(copies, 3)):
                fn(i % copies)
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, stream=self.stream):
            for r in range(reps):
                fn(r % copies)
        graph.replay()
        torch.cuda.synchronize()
        times = []
        for _ in range(self.replays):
            start = torch.cuda.Event(enable_timing=True)
            stop = torch.cuda.Event(enable_timing=True)
            start.record()
            graph.replay()
            stop.record()
            stop.synchronize()
            times.append(start.elapsed_time(stop) / 1e3 / reps)
        del graph
        return statistics.median(times), reps


COMMENT = [print]


def guarded(run):
    """A kernel that fails (an operator missing from this PyTorch) is noted, not fatal."""
    def wrapper(*args, **kwargs):
        try:
            run(*args, **kwargs)
        except Exception as e:  # noqa: BLE001
            COMMENT[0]("skipped %s: %s: %s" % (args[:2], type(e).__name__, str(e)[:200]))
            torch.cuda.synchronize()
    return wrapper


def copies_for(bytes_per_set, l2_bytes):
    return max(1, min(8, math.ceil(3 * l2_bytes / max(bytes_per_set, 1))))


def rand(shape, dtype):
    return torch.randn(*shape, device="cuda", dtype=torch.float32).to(dtype)


# Layer shapes: (name, hidden, ffn, fc1 multiple (2: gated), heads, tokens, t).
MODELS = [
    ("gpt-1.7b", 2304, 4 * 2304, 1, 24, 8192, 1),
    ("gpt-7.1b", 4096, 4 * 4096, 1, 32, 8192, 2),
    ("gpt-16b", 6144, 4 * 6144, 1, 48, 8192, 4),
    ("gpt-32b", 8192, 4 * 8192, 1, 64, 8192, 8),
    ("gpt-175b", 12288, 4 * 12288, 1, 96, 2048, 8),
    ("gpt-175b-mb2", 12288, 4 * 12288, 1, 96, 4096, 8),
    ("llama3-8b", 4096, 14336, 2, 32, 16384, 1),
    ("llama3-8b-t8", 4096, 14336, 2, 32, 8192, 8),
    ("llama3-70b", 8192, 28672, 2, 64, 8192, 8),
    ("gpt-1.3b", 2048, 4 * 2048, 1, 16, 4096, 1),
]


def layer_gemms():
    """(label, m, n, k) of out[m][n] = x[m][k]·W[k][n] for each linear layer's forward."""
    out = []
    for name, h, ffn, gate, heads, tokens, t in MODELS:
        head_dim = h // heads
        # GPT: q, k and v of every head; Llama 3: grouped-query attention with 8 KV heads.
        qkv = 3 * h if gate == 1 else h + 2 * 8 * head_dim
        out += [
            ("%s/qkv" % name, tokens, qkv // t, h),
            ("%s/proj" % name, tokens, h, h // t),
            ("%s/fc1" % name, tokens, gate * ffn // t, h),
            ("%s/fc2" % name, tokens, h, ffn // t),
        ]
    return out


def measure_gemm(timer, writer, l2):
    @guarded
    def run(label, kind, m, n, k, batch=1):
        # kind: fwd: x[m,k] @ W[n,k]^T; dgrad: dy[m,k] @ W[k,n]; wgrad: dy[k,m]^T @ x[k,n]
        #       bmm: a[b,m,k] @ b[b,k,n]
        per_set = 2 * batch * (m * k + k * n + m * n)
        copies = copies_for(per_set, l2)
        if kind == "fwd":
            a = [rand((m, k), torch.bfloat16) for _ in range(copies)]
            w = [rand((n, k), torch.bfloat16) for _ in range(copies)]
            fn = lambda i: torch.matmul(a[i], w[i].t())
        elif kind == "dgrad":
            a = [rand((m, k), torch.bfloat16) for _ in range(copies)]
            w = [rand((k, n), torch.bfloat16) for _ in range(copies)]
            fn = lambda i: torch.matmul(a[i], w[i])
        elif kind == "wgrad":
            a = [rand((k, m), torch.bfloat16) for _ in range(copies)]
            w = [rand((k, n), torch.bfloat16) for _ in range(copies)]
            fn = lambda i: torch.matmul(a[i].t(), w[i])
        else:
            a = [rand((batch, m, k), torch.bfloat16) for _ in range(copies)]
            w = [rand((batch, k, n), torch.bfloat16) for _ in range(copies)]
            fn = lambda i: torch.bmm(a[i], w[i])
        flops = 2 * batch * m * n * k
        s, reps = timer(fn, copies, flops / 6e14 + 5e-6)
        writer(["gemm", label + ":" + kind, "bf16", batch, m, n, k, "", "", per_set, flops, s,
                reps, ""])

    for label, m, n, k in layer_gemms():
        run(label, "fwd", m, n, k)
        run(label, "dgrad", m, k, n)      # dx[m][k] = dy[m][n]·W[n][k]
        run(label, "wgrad", k, n, m)      # dW[k][n] = x[m][k]ᵀ·dy[m][n]
    for size in (256, 512, 1024, 2048, 4096, 8192, 16384):
        run("square", "fwd", size, size, size)
    for m in (64, 128, 512):              # skinny: few tokens, a wide weight
        run("skinny", "fwd", m, 8192, 8192)
    # Unfused attention's batched GEMMs: scores q·kᵀ (s × s × d) and context p·v (s × d × s).
    for name, heads, seq in (("gpt-175b-t8", 12, 2048), ("gpt-1.3b", 16, 1024),
                             ("llama3-8b", 32, 8192)):
        run("attn/" + name + "/scores", "bmm", seq, seq, 128, batch=heads)
        run("attn/" + name + "/context", "bmm", seq, 128, seq, batch=heads)


def measure_fp8(timer, writer, l2):
    scale = torch.tensor(1.0, device="cuda", dtype=torch.float32)

    @guarded
    def run(label, m, n, k, fast):
        per_set = m * k + k * n + 2 * m * n
        copies = copies_for(per_set, l2)
        a = [rand((m, k), torch.bfloat16).to(torch.float8_e4m3fn) for _ in range(copies)]
        w = [rand((n, k), torch.bfloat16).to(torch.float8_e4m3fn) for _ in range(copies)]
        fn = lambda i: torch._scaled_mm(a[i], w[i].t(), scale_a=scale, scale_b=scale,
                                        out_dtype=torch.bfloat16, use_fast_accum=fast)
        flops = 2 * m * n * k
        s, reps = timer(fn, copies, flops / 1.2e15 + 5e-6)
        writer(["fp8", label + ":fwd", "fp8_e4m3", 1, m, n, k, "", "", per_set, flops, s, reps,
                "fast_accum" if fast else "exact_accum"])

    for label, m, n, k in layer_gemms():
        run(label, m, n, k, True)
    for size in (1024, 2048, 4096, 8192, 16384):
        run("square", size, size, size, True)
        if size >= 4096:
            run("square", size, size, size, False)
    # The cast a 16-bit activation needs before an FP8 GEMM (one kernel: read 2 B, write 1 B).
    for n in (1 << 22, 1 << 24, 1 << 26):
        copies = copies_for(3 * n, l2)
        x = [rand((n,), torch.bfloat16) for _ in range(copies)]
        s, reps = timer(lambda i: x[i].to(torch.float8_e4m3fn), copies, 3 * n / 2.5e12 + 5e-6)
        writer(["fp8", "cast_bf16_to_fp8", "fp8_e4m3", "", "", "", "", n, "", 3 * n, "", s, reps,
                ""])


def measure_vector(timer, writer, l2):
    @guarded
    def run(kernel, elements, row, per_set, make, fn, dtype="bf16", note=""):
        copies = copies_for(per_set, l2)
        sets = [make() for _ in range(copies)]
        s, reps = timer(lambda i: fn(*sets[i]), copies, per_set / 2.5e12 + 5e-6)
        writer(["vector", kernel, dtype, "", "", "", "", elements, row, per_set, "", s, reps,
                note])

    bf = torch.bfloat16
    for n in (1 << 20, 1 << 23, 1 << 26):
        run("copy", n, "", 4 * n, lambda: (rand((n,), bf), torch.empty(n, device="cuda", dtype=bf)),
            lambda x, y: y.copy_(x))
        run("add", n, "", 6 * n, lambda: (rand((n,), bf), rand((n,), bf)), lambda x, y: x + y)
        run("gelu", n, "", 4 * n, lambda: (rand((n,), bf),), lambda x: F.gelu(x))
        run("gelu_tanh", n, "", 4 * n, lambda: (rand((n,), bf),),
            lambda x: F.gelu(x, approximate="tanh"))
        run("gelu_backward", n, "", 6 * n, lambda: (rand((n,), bf), rand((n,), bf)),
            lambda g, x: torch.ops.aten.gelu_backward(g, x))
        run("silu", n, "", 4 * n, lambda: (rand((n,), bf),), lambda x: F.silu(x))
        run("silu_backward", n, "", 6 * n, lambda: (rand((n,), bf), rand((n,), bf)),
            lambda g, x: torch.ops.aten.silu_backward(g, x))
        run("mul", n, "", 6 * n, lambda: (rand((n,), bf), rand((n,), bf)), lambda x, y: x * y)
        # native_dropout writes the output and a one-byte mask.
        run("dropout", n, "", 5 * n, lambda: (rand((n,), bf),),
            lambda x: torch.ops.aten.native_dropout(x, 0.1, True))
        run("dropout_backward", n, "", 5 * n,
            lambda: (rand((n,), bf), torch.rand(n, device="cuda") > 0.1),
            lambda g, mask: torch.ops.aten.native_dropout_backward(g, mask, 1 / 0.9))
        for h in (4096, 12288):
            rows = n // h
            if rows == 0:
                continue
            e = rows * h
            run("layernorm", e, h, 4 * e,
                lambda: (rand((rows, h), bf), rand((h,), bf), rand((h,), bf)),
                lambda x, w, b: torch.ops.aten.native_layer_norm(x, [h], w, b, 1e-5))

            def ln_bwd_make():
                x = rand((rows, h), bf)
                w, b = rand((h,), bf), rand((h,), bf)
                _, mean, rstd = torch.ops.aten.native_layer_norm(x, [h], w, b, 1e-5)
                return rand((rows, h), bf), x, mean, rstd, w, b
            run("layernorm_backward", e, h, 6 * e, ln_bwd_make,
                lambda g, x, mean, rstd, w, b: torch.ops.aten.native_layer_norm_backward(
                    g, x, [h], mean, rstd, w, b, [True, True, True]),
                note="input and parameter gradients")
            run("rmsnorm", e, h, 4 * e, lambda: (rand((rows, h), bf), rand((h,), bf)),
                lambda x, w: F.rms_norm(x, [h], w, 1e-5), note="F.rms_norm")
        for seq in (1024, 2048):
            rows = n // seq
            e = rows * seq
            run("softmax", e, seq, 4 * e, lambda: (rand((rows, seq), bf),),
                lambda x: torch.softmax(x, -1))

            def sm_bwd_make():
                y = torch.softmax(rand((rows, seq), bf), -1)
                return rand((rows, seq), bf), y
            run("softmax_backward", e, seq, 6 * e, sm_bwd_make,
                lambda g, y: torch.ops.aten._softmax_backward_data(g, y, -1, bf))
        # Megatron's fp32 main weights: Adam reads param, grad, m, v and writes param, m, v.
        run("adam", n, "", 28 * n,
            lambda: ([torch.randn(n, device="cuda")], [torch.randn(n, device="cuda")],
                     [torch.randn(n, device="cuda")], [torch.rand(n, device="cuda")],
                     [torch.ones((), device="cuda")]),
            lambda p, g, m, v, step: torch._fused_adam_(
                p, g, m, v, [], step, lr=1e-4, beta1=0.9, beta2=0.95, weight_decay=0.1,
                eps=1e-8, amsgrad=False, maximize=False),
            dtype="fp32", note="torch._fused_adam_")
    for tokens, vocab in ((2048, 50304), (4096, 128256)):
        e = tokens * vocab
        run("cross_entropy", e, vocab, 2 * e,
            lambda: (rand((tokens, vocab), bf),
                     torch.randint(0, vocab, (tokens,), device="cuda")),
            lambda x, y: F.cross_entropy(x, y), note="log_softmax + nll: several kernels")


def measure_flash(writer):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    for b, heads, seq in ((1, 12, 2048), (4, 16, 1024), (1, 32, 4096), (2, 32, 8192),
                          (1, 64, 2048)):
        q, k, v = (rand((b, heads, seq, 128), torch.bfloat16).requires_grad_() for _ in range(3))
        g = rand((b, heads, seq, 128), torch.bfloat16)
        flops_fwd = 4 * b * heads * seq * seq * 128 // 2  # causal: half the scores
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            for mode in ("fwd", "fwd_bwd"):
                def step():
                    q.grad = k.grad = v.grad = None
                    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
                    if mode == "fwd_bwd":
                        out.backward(g)
                for _ in range(3):
                    step()
                torch.cuda.synchronize()
                times = []
                for _ in range(7):
                    start = torch.cuda.Event(enable_timing=True)
                    stop = torch.cuda.Event(enable_timing=True)
                    start.record()
                    step()
                    stop.record()
                    stop.synchronize()
                    times.append(start.elapsed_time(stop) / 1e3)
                flops = flops_fwd * (1 if mode == "fwd" else 3.5)  # backward: 2.5× forward
                writer(["flash", "flash_attention:" + mode, "bf16", b * heads, seq, seq, 128, "",
                        "", 4 * 2 * b * heads * seq * 128, int(flops), statistics.median(times),
                        7, "events around eager calls (host time included; kernels are long)"])


def measure_tiny(timer, writer, l2):
    bf = torch.bfloat16
    x, y = rand((4096,), bf), rand((4096,), bf)
    s, reps = timer(lambda i: x + y, 1, 3e-6)
    writer(["tiny", "add", "bf16", "", "", "", "", 4096, "", 3 * 2 * 4096, "", s, reps,
            "per-kernel floor"])
    a, w = rand((128, 128), bf), rand((128, 128), bf)
    s, reps = timer(lambda i: torch.matmul(a, w.t()), 1, 5e-6)
    writer(["tiny", "gemm:fwd", "bf16", 1, 128, 128, 128, "", "", 3 * 2 * 128 * 128,
            2 * 128 ** 3, s, reps, "per-kernel floor"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True, help="CSV to write")
    parser.add_argument("--only", default="tiny,gemm,fp8,vector,flash",
                        help="comma-separated sections (default: all)")
    args = parser.parse_args()
    sections = args.only.split(",")
    props = torch.cuda.get_device_properties(0)
    l2 = getattr(props, "L2_cache_size", 50 << 20)
    out = open(args.out, "w")

    def comment(text):
        out.write("# " + text + "\n")
        out.flush()
        print(text, flush=True)

    comment("device: %s, %d SMs, L2 %d bytes, %d bytes of memory; torch %s, CUDA %s" % (
        props.name, props.multi_processor_count, l2, props.total_memory, torch.__version__,
        torch.version.cuda))
    comment("nvidia-smi before (%s): %s" % (SMI_FIELDS, smi(SMI_FIELDS)))
    COMMENT[0] = comment
    out.write(",".join(COLUMNS) + "\n")
    counts = {}

    def writer(row):
        out.write(",".join(str(c) if not isinstance(c, float) else "%.6e" % c for c in row) + "\n")
        out.flush()
        counts[row[0]] = counts.get(row[0], 0) + 1

    torch.manual_seed(0)
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = True
    timer = Timer()
    for section in sections:
        t0 = time.time()
        try:
            if section == "tiny":
                measure_tiny(timer, writer, l2)
            elif section == "gemm":
                measure_gemm(timer, writer, l2)
            elif section == "fp8":
                measure_fp8(timer, writer, l2)
            elif section == "vector":
                measure_vector(timer, writer, l2)
            elif section == "flash":
                measure_flash(writer)
            else:
                sys.exit("unknown section '%s'" % section)
        except Exception as e:  # noqa: BLE001 - keep the other sections' rows
            comment("section %s stopped: %s: %s" % (section, type(e).__name__, e))
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        print("section %s: %d rows in %.1f s" % (section, counts.get(section, 0),
                                                  time.time() - t0), flush=True)
    comment("nvidia-smi after (%s): %s" % (SMI_FIELDS, smi(SMI_FIELDS)))
    out.close()


if __name__ == "__main__":
    main()
