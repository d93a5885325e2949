// Megatron-LM tensor parallelism of width w (Shoeybi et al. 2019), optionally with sequence
// parallelism (Korthikanti et al. 2022) or expert parallelism, for the `megatron`,
// `sequence_parallel` and `moe` strategy plugins (compiled into each). Megatron's roles are read
// off the neutral axes the framework's graph builder states on every op (MegatronRoleOf).
//
// Tensor parallelism:
// * column-parallel GEMMs (QKV, first FFN GEMM, LM head): n / w; row-parallel GEMMs (attention
//   output, second FFN GEMM): k / w; sharded ops (heads, FFN activations, split biases,
//   vocabulary-parallel cross-entropy): work / w; replicated and unsplit ops: whole.
// * g after every row-parallel op (and the vocabulary-parallel embedding): all-reduce of its
//   output forward, identity backward; f before every column-parallel GEMM reading an unsplit
//   tensor: identity forward, all-reduce of the input gradient backward. Per block: two all-reduces
//   of b·s·h values forward and two backward (REFERENCE §3.5).
// * Vocabulary-parallel cross-entropy: three all-reduces of b·s fp32 values forward.
// Sequence parallelism on top: replicated ops (norms, dropouts, residual adds, per-token GEMMs)
// work on s/w of the sequence; g becomes reduce-scatter forward / all-gather backward, f becomes
// all-gather forward / reduce-scatter backward; a column-parallel GEMM keeps its sequence-split
// input for backward (so a block saves s·b·h·(34 + 5·a·s/h)/w bytes); layer edges carry s/w of
// the hidden state; the all-gather that re-forms that input for the weight gradient in the
// backward pass is the `.regather` collective (identity forward) — or, with `gathered_input:
// keep` (PyTorch DTensor, TorchTitan), the GEMM keeps the gathered input and nothing re-gathers.
// Expert parallelism (MoE): experts e < E/w stay on the device (whole: each receives its routed
// tokens from every device), the rest are dropped; all-to-alls of the routed-token buffer before
// the experts and after them; the rest is sliced as with sequence parallelism. With an expert
// width e = j·w (TensorParallelOptions::expert_parallel_size), E/e experts stay, each with j× the
// tokens, and the all-to-alls span the e devices. With expert tensor parallelism (experts split
// over the width, TensorParallelOptions::expert_tensor_parallel), e counts replicas: E/e experts
// stay, each split over the w devices like the dense FFN, and the all-to-alls span e devices w
// ranks apart.
// Collective bytes are per device: the full tensor for all-reduce, the gathered (output) tensor
// for all-gather, the input tensor for reduce-scatter and all-to-all.
#pragma once

#include <cstdint>
#include <string>

#include "phaze/core/config_node.hpp"
#include "phaze/graph/layer_graph.hpp"
#include "phaze/strategy/parallelism_strategy.hpp"

namespace phaze::strategies {

// How Megatron-LM splits an op, from its axes (Operator::axes):
enum class MegatronRole {
  kReplicated,  // every rank does all of it (norms, residual adds, dropout on the residual stream)
  kColumn,      // a GEMM whose n is heads, FFN or vocabulary: n split
  kRow,         // a GEMM whose k is heads or FFN (partial sums; an all-reduce follows), and the
                // word-embedding gather (vocabulary-parallel table)
  kSharded,     // other work spanning heads, FFN or vocabulary (attention planes, activations, the
                // vocabulary-parallel cross-entropy)
  kUnsplit,     // work not along the tokens at all (the BERT pooler on first tokens)
  kExpert,      // one MoE expert's branch (Operator::expert ≥ 0): placed whole on a device
};
// `split_experts` (expert tensor parallelism): an expert's ops take the role they would have
// outside an expert (its FFN GEMMs column and row parallel, its activations sharded).
MegatronRole MegatronRoleOf(const Operator& op, bool split_experts = false);

struct TensorParallelOptions {
  bool sequence_parallel = false;
  // Megatron-LM's --make-vocab-size-divisible-by: the vocabulary is padded with unused rows to a
  // multiple of this × the width (the embedding table, the LM head and the loss grow with it;
  // LayerGraph::padded_vocab reports it), so the width always divides it. A graph whose
  // vocabulary is unknown (LayerGraph::vocab 0: an imported graph) is not padded.
  std::int64_t vocab_multiple = 128;
  // Expert parallelism (with sequence parallelism for everything else): each device keeps
  // experts/w whole experts; an all-to-all sends every token's routed copies to the experts'
  // devices before the experts (dispatch) and back after them (combine), in both passes.
  bool expert_parallel = false;
  // The expert-parallel size e (the moe strategy's `expert_parallel` param; 0: the width w). With
  // whole experts (expert_tensor_parallel false) a multiple of w, whose e/w data-parallel replicas
  // join the width's devices in each expert group
  // (Megatron-LM's MoE parallel folding with expert tensor parallelism 1, TorchTitan's expert
  // parallelism borrowing data-parallel ranks): each device keeps experts/e whole experts, each
  // receiving the tokens of e devices; the all-to-alls run over the e devices (consecutive ranks:
  // the width innermost); LayerGraph::expert_fold = e/w tells the placement that the experts'
  // weights are held by d/(e/w) replicas.
  std::int64_t expert_parallel_size = 0;
  // Expert tensor parallelism at the width (`expert_tensor_parallel: width` in the strategy's
  // params; Megatron-LM's --expert-tensor-parallel-size t, its default, the "traditional" mapping
  // of its MoE guide): each expert's FFN is split over the w devices as the dense FFN is (column
  // and row parallel), and the expert groups are e = expert_parallel_size replicas, w ranks apart,
  // each device keeping E/e experts' 1/w. The all-to-all carries the device's sequence shard of
  // the routed tokens over the e ranks (none at e = 1); one all-gather over the width then forms
  // the tokens of all its experts (the experts' GEMMs save them for backward), and one
  // reduce-scatter of the experts' partial sums follows the collection, as Megatron-LM's
  // alltoall dispatcher does (LayerGraph::expert_fold = e). Tensor-parallel overlap leaves both
  // exposed: the dispatcher runs them outside Transformer Engine's GEMM-overlapped communication
  // (graph/tensor_parallel_overlap.hpp). false (`1`, the default): whole experts.
  bool expert_tensor_parallel = false;
  // Under sequence parallelism, what a column-parallel GEMM saves of its all-gathered input for
  // the weight gradient (`gathered_input` in the strategy's params): false, `regather`
  // (Megatron-LM): its sequence shard, all-gathered again in backward (the `.regather`
  // collective); true, `keep` (PyTorch DTensor's ColwiseParallel, TorchTitan): the gathered
  // input itself, as autograd saves a linear's input — w× the shard's memory and no backward
  // all-gather (under recompute the re-run's gather stands in for it).
  bool keep_gathered_input = false;
};

// The expert-parallel size of `options` at width w (expert_parallel_size, or w): devices under
// whole experts, data-parallel replicas under expert tensor parallelism.
inline std::int64_t ExpertParallelSize(const TensorParallelOptions& options, std::int64_t w) {
  return options.expert_parallel_size > 0 ? options.expert_parallel_size : w;
}

// "" when `width` splits every head, key/value head and split dimension (and, with sequence
// parallelism, the sequence); else the first op or hyperparameter that does not divide.
std::string TensorParallelRefusal(const LayerGraph& full, std::int64_t width,
                                  const TensorParallelOptions& options);
// The per-device forward graphs, parameters and split flags (see ParallelismStrategy::Slice).
LayerGraph TensorParallelSlice(const LayerGraph& full, std::int64_t width,
                               const TensorParallelOptions& options);

// `defaults` with the strategy's `params:` applied: make_vocab_size_divisible_by (an integer ≥ 1;
// 1: no padding), with sequence parallelism gathered_input (regather | keep), with expert
// parallelism expert_parallel (an integer) and expert_tensor_parallel (1 | width); any other key
// is a located error.
TensorParallelOptions ReadTensorParallelOptions(const ConfigNode& params,
                                                TensorParallelOptions defaults);

// The strategy the `megatron`, `sequence_parallel` and `moe` plugins register, by their options.
class TensorParallelStrategy : public ParallelismStrategy {
 public:
  explicit TensorParallelStrategy(TensorParallelOptions options) : options_(options) {}
  std::string Refusal(const LayerGraph& full, std::int64_t width) const override {
    return TensorParallelRefusal(full, width, options_);
  }
  LayerGraph Slice(const LayerGraph& full, std::int64_t width) const override {
    return TensorParallelSlice(full, width, options_);
  }

 private:
  TensorParallelOptions options_;
};

}  // namespace phaze::strategies
