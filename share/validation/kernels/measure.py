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
  lmhead (asked for by name) FP16 LM-head GEMMs and the tied embedding's backward at the
         vocabulary widths of vTrain's A100 runs at t = 1, 2 and 4 (measure_lmhead).

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


def gemm_runner(timer, writer, l2, section="gemm", dtype=torch.bfloat16, dtype_name="bf16"):
    """run(label, kind, m, n, k, batch=1): times one GEMM of `kind` and writes its row."""
    @guarded
    def run(label, kind, m, n, k, batch=1):
        # kind: fwd: x[m,k] @ W[n,k]^T; dgrad: dy[m,k] @ W[k,n]; wgrad: dy[k,m]^T @ x[k,n]
        #       bmm: a[b,m,k] @ b[b,k,n]
        per_set = 2 * batch * (m * k + k * n + m * n)
        copies = copies_for(per_set, l2)
        if kind == "fwd":
            a = [rand((m, k), dtype) for _ in range(copies)]
            w = [rand((n, k), dtype) for _ in range(copies)]
            fn = lambda i: torch.matmul(a[i], w[i].t())
        elif kind == "dgrad":
            a = [rand((m, k), dtype) for _ in range(copies)]
            w = [rand((k, n), dtype) for _ in range(copies)]
            fn = lambda i: torch.matmul(a[i], w[i])
        elif kind == "wgrad":
            a = [rand((k, m), dtype) for _ in range(copies)]
            w = [rand((k, n), dtype) for _ in range(copies)]
            fn = lambda i: torch.matmul(a[i].t(), w[i])
        else:
            a = [rand((batch, m, k), dtype) for _ in range(copies)]
            w = [rand((batch, k, n), dtype) for _ in range(copies)]
            fn = lambda i: torch.bmm(a[i], w[i])
        flops = 2 * batch * m * n * k
        s, reps = timer(fn, copies, flops / 6e14 + 5e-6)
        writer([section, label + ":" + kind, dtype_name, batch, m, n, k, "", "", per_set, flops,
                s, reps, ""])
    return run


def measure_gemm(timer, writer, l2):
    run = gemm_runner(timer, writer, l2)

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


def time_queued(step, seconds=0.05, reps=5):
    """Device seconds per step(), the median of `reps` timings of n queued calls.

    For eager code of several kernels (attention backward, a whole block): n calls are queued
    between two events, so the host's launches run ahead of the device once the first call is
    issued and its time is not in the figure when the kernels are longer than their launches.
    """
    for _ in range(2):
        step()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    step()
    stop.record()
    stop.synchronize()
    once = start.elapsed_time(stop) / 1e3
    n = max(2, min(200, int(seconds / max(once, 1e-6))))
    times = []
    for _ in range(reps):
        start.record()
        for _ in range(n):
            step()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) / 1e3 / n)
    return statistics.median(times), n * reps


# (batch, query heads, key/value heads, sequence, head dimension): BERT-large and GPT-2 at
# head dimension 64; the 128-wide heads of the GPT and Llama layers at 1K-16K tokens (and the
# flash section's five shapes again, so the two backends meet on the same rows).
ATTENTION_SHAPES = [
    (32, 16, 16, 512, 64), (8, 12, 12, 1024, 64), (4, 16, 16, 2048, 64),
    (1, 32, 32, 1024, 128), (1, 32, 32, 2048, 128), (1, 32, 32, 4096, 128),
    (1, 32, 32, 8192, 128), (1, 32, 32, 16384, 128), (2, 32, 32, 8192, 128),
    (4, 16, 16, 1024, 128), (1, 12, 12, 2048, 128), (1, 64, 64, 2048, 128),
    (1, 32, 8, 8192, 128),
]


def measure_attention(writer, shapes=None, masks=(True, False), efficient=True):
    """Fused attention as the recipes run it: PyTorch's FlashAttention-2 and cuDNN's fused
    attention (the kernel Transformer Engine calls), causal and full mask, forward and forward
    plus backward. FLOPs count the scores the mask keeps (causal: s(s+1)/2 of s²)."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    backends = [("flash_attention", SDPBackend.FLASH_ATTENTION),
                ("cudnn_attention", SDPBackend.CUDNN_ATTENTION)]
    if efficient:
        backends.append(("efficient_attention", SDPBackend.EFFICIENT_ATTENTION))
    for b, heads, kv, seq, d in shapes or ATTENTION_SHAPES:
        q = rand((b, heads, seq, d), torch.bfloat16).requires_grad_()
        k, v = (rand((b, kv, seq, d), torch.bfloat16).requires_grad_() for _ in range(2))
        g = rand((b, heads, seq, d), torch.bfloat16)
        extra = {"enable_gqa": True} if kv != heads else {}
        for name, backend in backends:
            for causal in masks:
                kept = seq * (seq + 1) // 2 if causal else seq * seq
                flops_fwd = 4 * b * heads * kept * d
                for mode in ("fwd", "fwd_bwd"):
                    @guarded
                    def run(name, mode, backend=backend, causal=causal, flops_fwd=flops_fwd):
                        def step():
                            out = F.scaled_dot_product_attention(q, k, v, is_causal=causal,
                                                                 **extra)
                            if mode == "fwd_bwd":
                                torch.autograd.grad(out, (q, k, v), g)
                        with sdpa_kernel(backend):
                            s, reps = time_queued(step)
                        # Backward: five s×s×d products to the forward's two (2.5×).
                        flops = flops_fwd * (1 if mode == "fwd" else 3.5)
                        writer(["attention", "%s:%s:%s" % (name, mode,
                                                           "causal" if causal else "full"),
                                "bf16", b * heads, seq, seq, d, "", kv * b,
                                2 * (2 * b * heads + 2 * b * kv) * seq * d, int(flops), s, reps,
                                "queued eager calls; row = batch x key/value heads"])
                    run(name, mode)
        del q, k, v, g
        torch.cuda.empty_cache()


class LlamaBlock:
    """One Llama 3 transformer block as TorchTitan writes it (RMSNorm, grouped-query attention
    with its keys and values repeated to every head, complex rotary embeddings in FP32, SDPA,
    SwiGLU), BF16 weights, so a single GPU times the work a block's step is made of."""

    def __init__(self, hidden=4096, heads=32, kv_heads=8, ffn=14336, seq=8192, head_dim=128):
        self.h, self.heads, self.kv, self.seq = hidden, heads, kv_heads, seq
        self.d = head_dim  # heads · head_dim < hidden: one tensor-parallel rank's slice
        bf = torch.bfloat16

        def weight(n, k):
            return (torch.randn(n, k, device="cuda") / math.sqrt(k)).to(bf).requires_grad_()
        self.wq, self.wk, self.wv = weight(heads * self.d, hidden), \
            weight(kv_heads * self.d, hidden), weight(kv_heads * self.d, hidden)
        self.wo = weight(hidden, heads * self.d)
        self.w1, self.w3, self.w2 = weight(ffn, hidden), weight(ffn, hidden), weight(hidden, ffn)
        self.n1 = torch.ones(hidden, device="cuda", dtype=bf, requires_grad=True)
        self.n2 = torch.ones(hidden, device="cuda", dtype=bf, requires_grad=True)
        freqs = 1.0 / (500000.0 ** (torch.arange(0, self.d, 2, device="cuda").float() / self.d))
        angles = torch.outer(torch.arange(seq, device="cuda").float(), freqs)
        self.freqs_cis = torch.polar(torch.ones_like(angles), angles)
        self.params = [self.wq, self.wk, self.wv, self.wo, self.w1, self.w3, self.w2, self.n1,
                       self.n2]

    def rotary(self, x):
        xc = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
        out = torch.view_as_real(xc * self.freqs_cis.view(1, self.seq, 1, -1)).flatten(3)
        return out.type_as(x)

    def linear(self, x, w):  # Float8LlamaBlock runs these in FP8
        return F.linear(x, w)

    def __call__(self, x):
        b, s = x.shape[0], x.shape[1]
        y = F.rms_norm(x, (self.h,), self.n1, 1e-5)
        q = self.linear(y, self.wq).view(b, s, self.heads, self.d)
        k = self.linear(y, self.wk).view(b, s, self.kv, self.d)
        v = self.linear(y, self.wv).view(b, s, self.kv, self.d)
        q, k = self.rotary(q), self.rotary(k)
        rep = self.heads // self.kv
        k = k[:, :, :, None, :].expand(b, s, self.kv, rep, self.d).reshape(b, s, self.heads,
                                                                             self.d)
        v = v[:, :, :, None, :].expand(b, s, self.kv, rep, self.d).reshape(b, s, self.heads,
                                                                             self.d)
        o = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2),
                                           v.transpose(1, 2), is_causal=True)
        x = x + self.linear(o.transpose(1, 2).reshape(b, s, self.heads * self.d), self.wo)
        y = F.rms_norm(x, (self.h,), self.n2, 1e-5)
        return x + self.linear(F.silu(self.linear(y, self.w1)) * self.linear(y, self.w3), self.w2)


def per_op_context():
    """TorchTitan's per-op selective activation checkpointing (`_custom_policy`): keep the
    outputs of every mm but every second one (in forward order), of SDPA and of the max;
    re-run everything else in the backward."""
    from collections import defaultdict
    from torch.utils.checkpoint import CheckpointPolicy, create_selective_checkpoint_contexts
    aten = torch.ops.aten
    save = {aten.mm.default, aten._scaled_dot_product_efficient_attention.default,
            aten._scaled_dot_product_flash_attention.default, aten.max.default}
    if hasattr(aten, "_scaled_dot_product_cudnn_attention"):
        save.add(aten._scaled_dot_product_cudnn_attention.default)
    meta = defaultdict(int)

    def policy(ctx, func, *args, **kwargs):
        key = "%s_mm_count" % ("recompute" if ctx.is_recompute else "forward")
        if func == aten.mm.default:
            meta[key] += 1
        keep = func in save and not (func == aten.mm.default and meta[key] % 2 == 0)
        return CheckpointPolicy.MUST_SAVE if keep else CheckpointPolicy.PREFER_RECOMPUTE
    return create_selective_checkpoint_contexts(policy)


def measure_layer(writer, compile_too=True):
    """A Llama 3 8B block (TorchTitan's layer, sequence 8,192) on one GPU: forward, forward
    plus backward without recompute, with TorchTitan's per-op checkpointing and with full
    recompute, eager on each SDPA backend and compiled (torch.compile of the block)."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.utils.checkpoint import checkpoint
    block = LlamaBlock()
    # FLOPs of the block's GEMMs and causal attention (s(s+1)/2 scores), forward.
    h, kvd, ffn, s = 4096, 8 * 128, 14336, 8192
    gemm = 2 * s * h * (h + 2 * kvd + h + 3 * ffn)
    attn = 4 * 32 * (s * (s + 1) // 2) * 128
    for batch in (1, 2):
        x = rand((batch, s, h), torch.bfloat16).requires_grad_()
        g = rand((batch, s, h), torch.bfloat16)
        inputs = [x] + block.params
        variants = [("fwd", None), ("fwd_bwd", None), ("fwd_bwd_per_op", "per-op"),
                    ("fwd_bwd_full", "full")]
        for backend_name, backend in (("flash", SDPBackend.FLASH_ATTENTION),
                                      ("cudnn", SDPBackend.CUDNN_ATTENTION)):
            for mode, recompute in variants:
                @guarded
                def run(mode, backend_name, recompute=recompute, backend=backend):
                    def step():
                        if recompute == "per-op":
                            out = checkpoint(block, x, use_reentrant=False,
                                             context_fn=per_op_context)
                        elif recompute == "full":
                            out = checkpoint(block, x, use_reentrant=False)
                        else:
                            out = block(x)
                        if mode != "fwd":
                            torch.autograd.grad(out, inputs, g)
                    with sdpa_kernel(backend):
                        sec, reps = time_queued(step, seconds=0.3, reps=3)
                    flops = batch * (gemm + attn) * (1 if mode == "fwd" else 3)
                    writer(["layer", "llama3-8b-block:%s" % mode, "bf16", batch, s, h, ffn, "",
                            "", "", flops, sec, reps, "eager, SDPA %s" % backend_name])
                run(mode, backend_name)
        if compile_too and batch == 2:  # TorchTitan's local batch on its 8-GPU rows
            @guarded
            def run_compiled(mode, batch=batch):
                fn = torch.compile(block.__call__)

                def step():
                    out = fn(x)
                    if mode != "fwd":
                        torch.autograd.grad(out, inputs, g)
                t0 = time.time()
                step()
                torch.cuda.synchronize()
                COMMENT[0]("compiled %s batch %d in %.1f s" % (mode, batch, time.time() - t0))
                sec, reps = time_queued(step, seconds=0.3, reps=3)
                flops = batch * (gemm + attn) * (1 if mode == "fwd" else 3)
                writer(["layer", "llama3-8b-block:%s" % mode, "bf16", batch, s, h, ffn, "", "",
                        "", flops, sec, reps, "torch.compile, SDPA default"])
            run_compiled("fwd_bwd")
        del x, g
        torch.cuda.empty_cache()


class GptBlock:
    """One Megatron-LM GPT block as its eager PyTorch ops (pre-LN LayerNorm with bias, fused QKV
    with bias, SDPA, projection, dropout and residual, LayerNorm, fc1 with bias, tanh-GELU, fc2,
    dropout and residual), BF16 weights: what phaze's megatron-gpt block prices, one GPU."""

    def __init__(self, hidden, heads, ffn, dropout):
        self.h, self.heads, self.d, self.p = hidden, heads, hidden // heads, dropout
        bf = torch.bfloat16

        def weight(n, k):
            return (torch.randn(n, k, device="cuda") / math.sqrt(k)).to(bf).requires_grad_()

        def vec(n, value=0.0):
            return torch.full((n,), value, device="cuda", dtype=bf, requires_grad=True)
        self.wqkv, self.bqkv = weight(3 * hidden, hidden), vec(3 * hidden)
        self.wo, self.bo = weight(hidden, hidden), vec(hidden)
        self.w1, self.b1 = weight(ffn, hidden), vec(ffn)
        self.w2, self.b2 = weight(hidden, ffn), vec(hidden)
        self.g1, self.e1, self.g2, self.e2 = vec(hidden, 1.0), vec(hidden), vec(hidden, 1.0), \
            vec(hidden)
        self.params = [self.wqkv, self.bqkv, self.wo, self.bo, self.w1, self.b1, self.w2,
                       self.b2, self.g1, self.e1, self.g2, self.e2]

    def __call__(self, x):
        b, s = x.shape[0], x.shape[1]
        y = F.layer_norm(x, (self.h,), self.g1, self.e1)
        qkv = F.linear(y, self.wqkv, self.bqkv).view(b, s, 3, self.heads, self.d)
        q, k, v = (qkv[:, :, i].transpose(1, 2) for i in range(3))
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=self.p)
        o = F.linear(o.transpose(1, 2).reshape(b, s, self.h), self.wo, self.bo)
        x = x + F.dropout(o, self.p)
        y = F.layer_norm(x, (self.h,), self.g2, self.e2)
        y = F.linear(F.gelu(F.linear(y, self.w1, self.b1), approximate="tanh"), self.w2, self.b2)
        return x + F.dropout(y, self.p)


def measure_gpt(writer):
    """Megatron-LM GPT blocks of the H100 README rows at t = 1 (1.7B: hidden 2,048, 16 heads,
    4,096 tokens, micro-batch 4; 7.1B's width at micro-batch 1), with dropout 0.1 (Megatron-LM's
    default) and without, on cuDNN's and FlashAttention-2's kernels; the causal attention alone
    with dropout; and the LM head with Megatron-LM's FP32 cross-entropy (131,072 and 128,256
    words)."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    for name, h, heads, ffn, b in (("gpt-1.7b", 2048, 16, 8192, 4), ("gpt-7.1b", 4096, 32, 16384, 1)):
        s = 4096
        x = rand((b, s, h), torch.bfloat16).requires_grad_()
        g = rand((b, s, h), torch.bfloat16)
        gemm = 2 * b * s * h * (3 * h + h + 2 * ffn)
        attn = 4 * b * heads * (s * (s + 1) // 2) * (h // heads)
        for p in (0.0, 0.1):
            block = GptBlock(h, heads, ffn, p)
            inputs = [x] + block.params
            for backend_name, backend in (("cudnn", SDPBackend.CUDNN_ATTENTION),
                                          ("flash", SDPBackend.FLASH_ATTENTION)):
                for mode in ("fwd", "fwd_bwd"):
                    @guarded
                    def run(mode, backend_name, backend=backend, block=block, inputs=inputs):
                        def step():
                            out = block(x)
                            if mode != "fwd":
                                torch.autograd.grad(out, inputs, g)
                        with sdpa_kernel(backend):
                            sec, reps = time_queued(step, seconds=0.2, reps=3)
                        writer(["layer", "%s-block:%s" % (name, mode), "bf16", b, s, h, ffn, "",
                                "", "", (gemm + attn) * (1 if mode == "fwd" else 3), sec, reps,
                                "eager, SDPA %s, dropout %g" % (backend_name, p)])
                    run(mode, backend_name)
        del x, g
        torch.cuda.empty_cache()
    for backend_name, backend in (("cudnn_attention", SDPBackend.CUDNN_ATTENTION),
                                  ("flash_attention", SDPBackend.FLASH_ATTENTION)):
        q, k, v = (rand((1, 32, 4096, 128), torch.bfloat16).requires_grad_() for _ in range(3))
        g = rand((1, 32, 4096, 128), torch.bfloat16)
        for mode in ("fwd", "fwd_bwd"):
            @guarded
            def run_attn(name, mode, backend=backend):
                def step():
                    out = F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=0.1)
                    if mode == "fwd_bwd":
                        torch.autograd.grad(out, (q, k, v), g)
                with sdpa_kernel(backend):
                    sec, reps = time_queued(step)
                flops = 4 * 32 * (4096 * 4097 // 2) * 128 * (1 if mode == "fwd" else 3.5)
                writer(["attention", "%s:%s:causal" % (name, mode), "bf16", 32, 4096, 4096, 128,
                        "", 32, 2 * 4 * 32 * 4096 * 128, int(flops), sec, reps,
                        "queued eager calls; dropout 0.1"])
            run_attn(backend_name, mode)
    for tokens, h, vocab in ((16384, 2048, 131072), (16384, 4096, 128256)):
        @guarded
        def run_head(tokens, h, vocab):
            x = rand((tokens, h), torch.bfloat16).requires_grad_()
            w = (torch.randn(vocab, h, device="cuda") / math.sqrt(h)).to(torch.bfloat16)
            w.requires_grad_()
            y = torch.randint(0, vocab, (tokens,), device="cuda")
            for mode in ("fwd", "fwd_bwd"):
                def step():
                    loss = F.cross_entropy(F.linear(x, w).float(), y)
                    if mode == "fwd_bwd":
                        torch.autograd.grad(loss, (x, w))
                sec, reps = time_queued(step, seconds=0.2, reps=3)
                writer(["layer", "lm-head-fp32-ce:%s" % mode, "bf16", 1, tokens, vocab, h, "", "",
                        "", 2 * tokens * h * vocab * (1 if mode == "fwd" else 3), sec, reps,
                        "eager: logits GEMM, .float(), F.cross_entropy"])
            del x, w
            torch.cuda.empty_cache()
        run_head(tokens, h, vocab)


class SmiSampler:
    """nvidia-smi read every `period` seconds on a thread: (host time, SM MHz, memory MHz,
    watts, °C, throttle reasons)."""

    def __init__(self, period=0.5):
        import threading
        self.samples, self.period, self.stop = [], period, threading.Event()
        self.thread = threading.Thread(target=self.loop, daemon=True)
        self.thread.start()

    def loop(self):
        while not self.stop.is_set():
            t = time.time()
            line = smi("clocks.sm,clocks.mem,power.draw,temperature.gpu,"
                       "clocks_throttle_reasons.active")
            self.samples.append((t, line))
            self.stop.wait(max(0.0, self.period - (time.time() - t)))

    def close(self):
        self.stop.set()
        self.thread.join()
        return self.samples


def measure_sustained(path, gemm_seconds=60.0, block_seconds=30.0):
    """Clocks and throughput held over a minute of back-to-back work, as a training run holds
    them (the other sections time kernels in isolation, on a cool card): 8192³ BF16 GEMMs on
    random operands, then the Llama block's forward and backward. One row per ~0.25 s window
    with the nearest nvidia-smi reading."""
    rows = []
    sampler = SmiSampler()
    t_start = time.time()
    m = 8192
    copies = 4
    a = [rand((m, m), torch.bfloat16) for _ in range(copies)]
    w = [rand((m, m), torch.bfloat16) for _ in range(copies)]
    per_window = 160
    i = 0
    while time.time() - t_start < gemm_seconds:
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(per_window):
            torch.matmul(a[i % copies], w[i % copies].t())
            i += 1
        stop.record()
        stop.synchronize()
        sec = start.elapsed_time(stop) / 1e3
        rows.append(("gemm8192", time.time() - t_start, 2 * m ** 3 * per_window / sec / 1e12,
                     "TFLOP/s"))
    del a, w
    block = LlamaBlock()
    x = rand((1, 8192, 4096), torch.bfloat16).requires_grad_()
    g = rand((1, 8192, 4096), torch.bfloat16)
    inputs = [x] + block.params
    t_block = time.time()
    while time.time() - t_block < block_seconds:
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(8):
            torch.autograd.grad(block(x), inputs, g)
        stop.record()
        stop.synchronize()
        rows.append(("llama3-8b-block", time.time() - t_start,
                     start.elapsed_time(stop) / 8, "ms per forward+backward"))
    samples = sampler.close()
    with open(path, "w") as f:
        f.write("phase,t_s,rate,unit,sm_mhz,mem_mhz,power_w,temp_c,throttle\n")
        for phase, t, rate, unit in rows:
            when = t_start + t
            near = min(samples, key=lambda smp: abs(smp[0] - when))[1] if samples else ""
            fields = [c.strip().split(" ")[0] for c in near.split(",")] if near else []
            f.write("%s,%.2f,%.4g,%s,%s\n" % (phase, t, rate, unit, ",".join(fields)))
    for phase in ("gemm8192", "llama3-8b-block"):
        vals = [r for r in rows if r[0] == phase]
        if not vals:
            continue
        n = max(1, len(vals) // 10)
        first = statistics.median(r[2] for r in vals[:n])
        last = statistics.median(r[2] for r in vals[-n:])
        COMMENT[0]("sustained %s: first tenth %.4g %s, last tenth %.4g %s (%d windows)" % (
            phase, first, vals[0][3], last, vals[0][3], len(vals)))


def measure_lmhead(timer, writer, l2):
    """The LM head of vTrain's A100 runs (share/validation/README.md, "The last stage at t = 1"):
    its three FP16 GEMMs over the vocabulary rows one GPU holds — 50,304 (t = 1), 50,257 (the
    unpadded GPT-2 vocabulary), 25,216 (t = 2) and 12,672 (t = 4) — at hidden 1,024 and 2,048 and
    1,024 and 4,096 tokens, and the tied embedding's dense backward (a V × h gradient from the
    tokens' rows) at the same shapes. The runs' head at t = 1 costs 2.5–2.8 ns per token and
    hidden unit more than at t = 2 beyond what the halved work explains; a GEMM shape cuBLAS runs
    slowly would show here."""
    run = gemm_runner(timer, writer, l2, section="lmhead", dtype=torch.float16, dtype_name="fp16")
    for vocab in (50304, 50257, 25216, 12672):
        for h in (1024, 2048):
            for tokens in (1024, 4096):
                label = "head-v%d-h%d" % (vocab, h)
                run(label, "fwd", tokens, vocab, h)      # logits[tokens][V] = x·Wᵀ
                run(label, "dgrad", tokens, h, vocab)    # dx[tokens][h] = dlogits·W
                run(label, "wgrad", h, vocab, tokens)    # dW = dlogitsᵀ·x, as measure_gemm's

    @guarded
    def embedding_backward(vocab, h, tokens):
        # Queued, not graph-captured: the sort-based backward may read a count back to the host.
        grad = rand((tokens, h), torch.float16)
        index = torch.randint(0, vocab, (tokens,), device="cuda")
        s, reps = time_queued(
            lambda: torch.ops.aten.embedding_dense_backward(grad, index, vocab, -1, False))
        writer(["lmhead", "embedding-backward-v%d-h%d" % (vocab, h), "fp16", "", tokens, h,
                vocab, tokens * h, "", 2 * (tokens * h + vocab * h), "", s, reps,
                "dense V x h gradient, queued timing"])

    for vocab in (50304, 25216):
        for h in (1024, 2048):
            for tokens in (1024, 4096):
                embedding_backward(vocab, h, tokens)


# Llama 3 8B's linear layers as TorchTitan's float8 rows run them (TorchTitan keeps wq, wk, wv,
# w1 and w3 apart): (label, tokens, n, k) of out[tokens][n] = x·Wᵀ. At TP 8 (the 2025-06 rows:
# local batch 12 × 8,192 tokens, sequence parallel, so each GEMM sees all 98,304) and at TP 1
# (the 2024-12 FSDP rows: local batch 2 × 8,192).
FLOAT8_LINEARS = [
    ("llama3-8b-t8/wq", 98304, 512, 4096), ("llama3-8b-t8/wk", 98304, 128, 4096),
    ("llama3-8b-t8/wo", 98304, 4096, 512), ("llama3-8b-t8/w1", 98304, 1792, 4096),
    ("llama3-8b-t8/w2", 98304, 4096, 1792),
    ("llama3-8b/wq", 16384, 4096, 4096), ("llama3-8b/wk", 16384, 1024, 4096),
    ("llama3-8b/w1", 16384, 14336, 4096), ("llama3-8b/w2", 16384, 4096, 14336),
]


def _float8_cast(t, dtype, fmax):
    """torchao's tensorwise dynamic scaling: the tensor's amax, a scale, the scaled cast."""
    amax = t.abs().max().to(torch.float32)
    scale = fmax / torch.clamp(amax, min=1e-12)
    return (t.to(torch.float32) * scale).clamp(-fmax, fmax).to(dtype), scale.reciprocal()


class _Float8Linear(torch.autograd.Function):
    """y = x·Wᵀ as torchao's Float8Linear computes it with tensorwise dynamic scaling: x and W
    cast to e4m3 every call (an amax pass each), the output gradient to e5m2; the three GEMMs
    through torch._scaled_mm, whose second operand must be column-major (the transposed FP8
    copies torchao makes); fast accumulation forward only, as torchao's default config."""

    @staticmethod
    def forward(ctx, x, w):
        xf, xs = _float8_cast(x, torch.float8_e4m3fn, 448.0)
        wf, ws = _float8_cast(w, torch.float8_e4m3fn, 448.0)
        ctx.save_for_backward(xf, xs, wf, ws)
        return torch._scaled_mm(xf, wf.t(), scale_a=xs, scale_b=ws, out_dtype=torch.bfloat16,
                                use_fast_accum=True)

    @staticmethod
    def backward(ctx, go):
        xf, xs, wf, ws = ctx.saved_tensors
        gf, gs = _float8_cast(go, torch.float8_e5m2, 57344.0)
        dx = torch._scaled_mm(gf, wf.t().contiguous().t(), scale_a=gs, scale_b=ws,
                              out_dtype=torch.bfloat16)
        dw = torch._scaled_mm(gf.t().contiguous(), xf.t().contiguous().t(), scale_a=gs,
                              scale_b=xs, out_dtype=torch.bfloat16)
        return dx, dw


def measure_float8(writer, budget_s=150.0):
    """The float8 linear TorchTitan's float8 rows ran (torchao, tensorwise dynamic scaling)
    against its BF16 linear, forward + backward of one layer (FLOAT8_LINEARS), so the float8
    recipe's whole overhead — amax passes, scaled casts, weight casts each call, FP8 transposes
    — shows beside the bare FP8 GEMMs of the fp8 section: BF16 eager; the same recipe written
    out (_Float8Linear) eager and torch.compile'd (TorchTitan compiles); torchao's own
    Float8Linear compiled where torchao is installed; and the compiled activation cast alone
    (amax + scaled cast, the forward's share). Compiled rows stop after `budget_s` seconds."""
    torchao = None
    try:
        from torchao.float8 import convert_to_float8_training
        import torchao as torchao
        COMMENT[0]("torchao %s" % getattr(torchao, "__version__", "?"))
    except Exception as e:  # noqa: BLE001
        COMMENT[0]("no torchao (%s): the written-out recipe only" % type(e).__name__)
    # One compile per shape (dynamic=False), and room in dynamo's cache for all of them.
    torch._dynamo.config.cache_size_limit = 64
    t0 = time.time()
    recipe = lambda x, w: _Float8Linear.apply(x, w)
    bf16 = lambda x, w: F.linear(x, w)
    for label, m, n, k in FLOAT8_LINEARS:
        x = rand((m, k), torch.bfloat16).requires_grad_()
        w = (torch.randn(n, k, device="cuda") / math.sqrt(k)).to(torch.bfloat16).requires_grad_()
        g = rand((m, n), torch.bfloat16)
        flops = 2 * m * n * k
        byts = 2 * (m * k + n * k + m * n)

        @guarded
        def run(variant, fn, note, mode="fwd_bwd", dtype="fp8_tensorwise"):
            def step():
                out = fn(x, w)
                if mode == "fwd_bwd":
                    torch.autograd.grad(out, (x, w), g)
            c0 = time.time()
            step()
            torch.cuda.synchronize()
            sec, reps = time_queued(step, seconds=0.1, reps=3)
            writer(["float8", "%s:%s:%s" % (label, variant, mode), dtype, 1, m, n, k, "", "",
                    byts, flops * (3 if mode == "fwd_bwd" else 1), sec, reps,
                    "%s; first call %.1f s" % (note, time.time() - c0)])

        for mode in ("fwd", "fwd_bwd"):
            run("linear", bf16, "eager F.linear", mode, "bf16")
            run("recipe", recipe, "eager; written out", mode)
        if time.time() - t0 < budget_s:
            run("recipe", torch.compile(recipe, dynamic=False), "torch.compile; written out")
            cast = torch.compile(lambda t: _float8_cast(t, torch.float8_e4m3fn, 448.0),
                                 dynamic=False)
            run("cast", lambda x, w: cast(x.detach()), "torch.compile amax + scaled cast of x",
                "fwd")
        if torchao is not None and time.time() - t0 < budget_s:
            @guarded
            def run_torchao(label=label, m=m, n=n, k=k):
                seq = torch.nn.Sequential(torch.nn.Linear(k, n, bias=False, device="cuda",
                                                          dtype=torch.bfloat16))
                convert_to_float8_training(seq)
                fn = torch.compile(seq, dynamic=False)
                params = list(seq.parameters())

                def step():
                    torch.autograd.grad(fn(x), [x] + params, g)
                c0 = time.time()
                step()
                torch.cuda.synchronize()
                sec, reps = time_queued(step, seconds=0.1, reps=3)
                writer(["float8", "%s:torchao:fwd_bwd" % label, "fp8_tensorwise", 1, m, n, k,
                        "", "", byts, 3 * flops, sec, reps,
                        "torch.compile; torchao Float8Linear (default config); first call "
                        "%.1f s" % (time.time() - c0)])
            run_torchao()
        del x, w, g
        torch.cuda.empty_cache()


def measure_float8_parts(timer, writer, l2):
    """The float8 section's linears taken apart, each kernel alone by graph replay: the three
    FP8 GEMMs as the recipe calls them (forward e4m3 × e4m3 with fast accumulation; the input
    gradient e5m2 × e4m3 and the weight gradient e5m2ᵀ × e4m3 with exact accumulation, as
    torchao's and Transformer Engine's backward GEMMs run; both again with fast accumulation),
    the amax of the 16-bit input (one reduction: the infinity norm) and the transposed copy of
    an FP8 tensor the backward GEMMs need."""
    e4, e5, one = torch.float8_e4m3fn, torch.float8_e5m2, torch.tensor(1.0, device="cuda")

    @guarded
    def gemm(label, kind, m, n, k, fast):
        # out[m][n] = a[m][k] · b[k][n], b column-major (the layout _scaled_mm takes).
        per_set = m * k + k * n + 2 * m * n
        copies = copies_for(per_set, l2)
        a_type = e4 if kind == "fwd" else e5
        a = [rand((m, k), torch.bfloat16).to(a_type) for _ in range(copies)]
        b = [rand((n, k), torch.bfloat16).to(e4) for _ in range(copies)]
        fn = lambda i: torch._scaled_mm(a[i], b[i].t(), scale_a=one, scale_b=one,
                                        out_dtype=torch.bfloat16, use_fast_accum=fast)
        flops = 2 * m * n * k
        sec, reps = timer(fn, copies, flops / 1.2e15 + 5e-6)
        writer(["float8", "%s:%s" % (label, kind), "fp8_e4m3" if kind == "fwd" else "fp8_e5m2",
                1, m, n, k, "", "", per_set, flops, sec, reps,
                "fast_accum" if fast else "exact_accum"])

    @guarded
    def stream(label, kernel, elements, per_set, make, fn, dtype):
        copies = copies_for(per_set, l2)
        sets = [make() for _ in range(copies)]
        sec, reps = timer(lambda i: fn(sets[i]), copies, per_set / 2.5e12 + 5e-6)
        writer(["float8", "%s:%s" % (label, kernel), dtype, "", "", "", "", elements, "",
                per_set, "", sec, reps, ""])

    for label, m, n, k in FLOAT8_LINEARS:
        for fast in (True, False):
            gemm(label, "fwd", m, n, k, fast)
            gemm(label, "dgrad", m, k, n, fast)     # dx[m][k] = dy[m][n] · W[n][k]
            gemm(label, "wgrad", n, k, m, fast)     # dW[n][k] = dy[m][n]ᵀ · x[m][k]
        inf = float("inf")
        stream(label, "amax_x", m * k, 2 * m * k, lambda: rand((m, k), torch.bfloat16),
               lambda x: torch.linalg.vector_norm(x, ord=inf), "bf16")
        stream(label, "transpose_fp8_x", m * k, 2 * m * k,
               lambda: rand((m, k), torch.bfloat16).to(e4), lambda x: x.t().contiguous(),
               "fp8_e4m3")
        torch.cuda.empty_cache()


class Float8LlamaBlock(LlamaBlock):
    """LlamaBlock with its seven linears through _Float8Linear (torchao's tensorwise recipe)."""

    def linear(self, x, w):
        shape = x.shape
        return _Float8Linear.apply(x.reshape(-1, shape[-1]), w).view(*shape[:-1], w.shape[0])


def measure_float8_block(writer):
    """What the float8 recipe costs inside a compiled block, where torch.compile may fuse the
    amax and the cast into their producers (the float8 section times a linear alone): a Llama 3 8B
    block at 8,192 tokens, BF16 and float8 (the written-out recipe), torch.compile'd, forward +
    backward without recompute — at TP 1 with micro-batch 2 (TorchTitan's 8B FSDP rows) and as
    one TP-8 rank's slice (4 query heads, 1 key/value head, FFN 1,792) with micro-batch 12."""
    torch._dynamo.config.cache_size_limit = 64
    for label, batch, heads, kv, ffn in (("llama3-8b", 2, 32, 8, 14336),
                                         ("llama3-8b-t8", 12, 4, 1, 1792)):
        s, h = 8192, 4096
        x = rand((batch, s, h), torch.bfloat16).requires_grad_()
        g = rand((batch, s, h), torch.bfloat16)
        gemm = 2 * batch * s * h * (heads * 128 + 2 * kv * 128 + heads * 128 + 3 * ffn)
        for dtype, cls in (("bf16", LlamaBlock), ("fp8_tensorwise", Float8LlamaBlock)):
            @guarded
            def run(label, dtype, cls=cls):
                block = cls(hidden=h, heads=heads, kv_heads=kv, ffn=ffn, seq=s)
                fn = torch.compile(block.__call__, dynamic=False)
                inputs = [x] + block.params

                def step():
                    torch.autograd.grad(fn(x), inputs, g)
                c0 = time.time()
                step()
                torch.cuda.synchronize()
                first = time.time() - c0
                sec, reps = time_queued(step, seconds=0.3, reps=3)
                writer(["float8", "%s-block:fwd_bwd" % label, dtype, batch, s, h, ffn, "", "", "",
                        3 * gemm, sec, reps, "torch.compile; SDPA default; first call %.1f s"
                        % first])
            run(label, dtype)
        del x, g
        torch.cuda.empty_cache()


# The 2024-12 TorchTitan row at 32,768 tokens (Llama 3.1 8B, FSDP on 8 GPUs, float8, full
# checkpointing, context parallelism 1): its attention at that length, causal, GQA 32/8.
LONG_ATTENTION_SHAPES = [(1, 32, 8, 32768, 128)]


def measure_align(timer, writer, l2):
    """GEMMs whose vocabulary-like dimension is 1, 2, 4, 8 or 16 elements past a multiple of 64
    (50,257 … 50,272: how far from 16-byte rows), in FP16 and BF16, as the LM head's three GEMMs
    (forward: the odd width is n; input gradient: k; weight gradient: n), at hidden 2,048 and
    4,096 tokens — which alignment cuBLAS needs for its tensor-core kernels (the lmhead rows:
    50,257 runs 4.5-6x slower than 50,304)."""
    for dtype, name in ((torch.float16, "fp16"), (torch.bfloat16, "bf16")):
        run = gemm_runner(timer, writer, l2, section="align", dtype=dtype, dtype_name=name)
        for vocab in (50257, 50258, 50260, 50264, 50272):
            label = "head-v%d-h2048" % vocab
            run(label, "fwd", 4096, vocab, 2048)
            run(label, "dgrad", 4096, 2048, vocab)
            run(label, "wgrad", 2048, vocab, 4096)
        # The odd dimension as the token count (m), which no layout puts in a row.
        run("tokens-4095-h2048", "fwd", 4095, 50304, 2048)


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
                        help="comma-separated sections (default: the kernels; attention, "
                        "layer, gpt, lmhead, align, long, float8, float8parts, float8block and sustained are "
                        "asked for by "
                        "name)")
    parser.add_argument("--no-compile", action="store_true",
                        help="layer: leave out the torch.compile'd block")
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
        counts[current[0]] = counts.get(current[0], 0) + 1
        if row[0] in ("attention", "layer") and row[11]:
            print("%-42s b%-4s s%-6s %9.3f ms %7.1f TFLOP/s  %s" % (
                row[1], row[3], row[4], row[11] * 1e3, row[10] / row[11] / 1e12, row[13][:24]),
                flush=True)

    torch.manual_seed(0)
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = True
    timer = Timer()
    current = [""]
    for section in sections:
        current[0] = section
        t0 = time.time()
        try:
            if section == "tiny":
                measure_tiny(timer, writer, l2)
            elif section == "gemm":
                measure_gemm(timer, writer, l2)
            elif section == "lmhead":
                measure_lmhead(timer, writer, l2)
            elif section == "fp8":
                measure_fp8(timer, writer, l2)
            elif section == "vector":
                measure_vector(timer, writer, l2)
            elif section == "flash":
                measure_flash(writer)
            elif section == "attention":
                measure_attention(writer)
            elif section == "long":
                measure_attention(writer, LONG_ATTENTION_SHAPES, masks=(True,), efficient=False)
            elif section == "float8":
                measure_float8(writer)
            elif section == "align":
                measure_align(timer, writer, l2)
            elif section == "float8block":
                measure_float8_block(writer)
            elif section == "float8parts":
                measure_float8_parts(timer, writer, l2)
            elif section == "layer":
                measure_layer(writer, compile_too=not args.no_compile)
            elif section == "gpt":
                measure_gpt(writer)
            elif section == "sustained":
                measure_sustained(args.out.rsplit(".csv", 1)[0] + "-sustained.csv")
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
