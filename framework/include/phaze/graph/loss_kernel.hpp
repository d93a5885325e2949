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
// The per-token work (label masks, gathers, the t-way all-reduces of three b·s vectors) is
// small beside these and not priced. Applied after the strategy (kernel passes are counted in
// the op's elements, so any slice scales them). Memory: the FP32 copy is the kept probabilities
// (computed in place), and the backward holds more beside them for a moment, the head's
// transient_bytes (KernelPasses::held_bytes per logit): `megatron` its 16-bit gradient (2
// bytes), `torch` the zeroed FP32 gradient and the log-softmax backward's FP32 output at once (8
// bytes). At the start of the last stage's backward every activation is still held, so this
// adds to the stage's peak: for Llama 3.1 8B at 2 × 8,192 tokens (vocabulary 128,256), 15.7 GiB.
#pragma once

#include <string_view>

#include "phaze/graph/layer_graph.hpp"

namespace phaze {

enum class LossKernel { kMegatron, kTorch };
std::string_view ToString(LossKernel kernel);  // "megatron", "torch"

// The passes of the loss's kernels beyond its own inputs and outputs, forward or backward.
KernelPasses LossPasses(LossKernel kernel, bool backward);

LayerGraph WithLossKernel(const LayerGraph& graph, LossKernel kernel);

}  // namespace phaze
