// How the language-model loss runs (training.loss): the cross-entropy over the vocabulary in
// FP32, as the kernels of its framework move the b·s·V logits through memory. The graphs build
// it as one op each way (graph_builder: read the 16-bit logits, write the FP32 probabilities it
// keeps; backward: read them, write the logits' gradient); its kernels' temporaries are on top
// (Operator::passes, in passes over the FP32 logits, n = b·s·V/t elements of 4 bytes):
// * `megatron` — Megatron-LM's vocab_parallel_cross_entropy (megatron/core/tensor_parallel/
//   cross_entropy.py, the path without --cross-entropy-loss-fusion), the default: forward
//   logits.float(), max, in-place subtract, exp, sum, in-place divide — six kernels, the cast's
//   FP32 copy written then re-read five times and rewritten three (2n + 36n bytes in all with
//   the op's own); backward grad.mul_ (on the kept probabilities) and the cast back to 16 bits,
//   two kernels (14n bytes).
// * `torch` — TorchTitan's and Hugging Face's F.cross_entropy(logits.float(), labels): the cast,
//   a log-softmax that reads its row three times (PyTorch's softmax kernel for rows over the
//   shared memory: max, sum of exponentials, write) and the gather of the labels' terms, three
//   kernels (22n bytes); backward the zeroed gradient with the labels scattered in, a
//   log-softmax backward that reads the gradient twice, and the cast, four kernels (26n bytes).
//   Measured on an H200 (share/validation/kernels/h200-sxm-141gb-gpt.csv, lm-head rows).
// * `compiled` — the same F.cross_entropy(logits.float(), labels) under torch.compile, as
//   TorchTitan runs it with compile on since April 2025 (torchtitan/components/loss.py
//   build_cross_entropy_loss at e7c0cae and 820504e; today's compile.components defaults to
//   ["model", "loss"]; its docs/composability.md: the FP32 upcast sits inside the loss so that
//   compiling it fuses the casts, "both throughput and memory usage"): Inductor fuses the cast
//   into the log-softmax's reductions and its partitioner saves the 16-bit logits and one
//   log-sum-exp per row, not FP32 log-probabilities.
//   Forward: the op reads the logits, then once more (a looped reduction over a row of 128K
//   values takes its max, then its sum of exponentials), and writes the row's log-sum-exp (the
//   op's kept output shrinks to one FP32 value a row); backward, one kernel: the op reads the
//   kept logits and writes the 16-bit gradient, softmax minus the labels' one-hot, times the
//   loss's gradient (no pass of its own). What it keeps is the logits (2 bytes each, the
//   backward's saved tensor re-sized and renamed to them) and the log-sum-exps; the backward
//   holds its 16-bit gradient beside them (held_bytes 2), as Megatron's does. Not measured here:
//   derived from Inductor's partitioner and reductions, checked against TorchTitan's published
//   peak memory (share/validation/h100.md, the H200 rows).
// The per-token work (label masks, gathers, the t-way all-reduces of three b·s vectors) is
// small beside these and not priced. Applied after the strategy (kernel passes are counted in
// the op's elements, so any slice scales them). Memory: the FP32 copy is the kept probabilities
// (computed in place), and the backward holds more beside them for a moment, the head's
// transient_bytes (KernelPasses::held_bytes per logit): `megatron` its 16-bit gradient (2
// bytes), `torch` the zeroed FP32 gradient and the log-softmax backward's FP32 output at once (8
// bytes), `compiled` its 16-bit gradient (2 bytes). At the start of the last stage's backward
// every activation is still held, so this adds to the stage's peak: for Llama 3.1 8B at 2 × 8,192
// tokens (vocabulary 128,256), 15.7 GiB with `torch`, 3.9 GiB compiled (which also keeps 3.9 GiB
// less: the 16-bit logits, not their FP32 log-probabilities).
#pragma once

#include <string_view>

#include "phaze/graph/layer_graph.hpp"

namespace phaze {

enum class LossKernel { kMegatron, kTorch, kCompiled };
std::string_view ToString(LossKernel kernel);  // "megatron", "torch", "compiled"

// The passes of the loss's kernels beyond its own inputs and outputs, forward or backward.
KernelPasses LossPasses(LossKernel kernel, bool backward);

LayerGraph WithLossKernel(const LayerGraph& graph, LossKernel kernel);

}  // namespace phaze
