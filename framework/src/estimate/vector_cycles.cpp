#include "phaze/estimate/vector_cycles.hpp"

#include <unordered_map>

#include "phaze/estimate/estimator.hpp"

namespace phaze {

const std::map<std::string, double>& VectorCyclesPerElement() {
  static const std::map<std::string, double> table = {
      {"add", 1},
      {"bias_add", 1},
      {"mul", 1},
      {"scale", 1},
      {"mask", 1},
      {"causal_mask", 1},
      {"dropout", 2},
      {"relu", 1},
      {"gelu", 16},
      {"gelu_tanh", 32},
      {"silu", 13},
      {"tanh", 27},
      {"softmax", 26},
      // FlashAttention's online softmax, inside the fused kernel (graph/attention_kernel.hpp):
      // fitted on H200 kernels (share/validation/kernels/); its exponentials run on an SM's 16
      // special-function units a clock, 8 of 128 lanes' cycles, beside the rescaling.
      {"flash_softmax", 8.5},
      // Its attention dropout, the random numbers drawn in the forward kernel (Philox): cuDNN's
      // causal kernel at 4,096 tokens takes 0.270 ms more with dropout 0.1 on an H200, 30 lane
      // cycles a kept score (share/validation/kernels/README.md).
      {"flash_dropout", 30},
      // The backward kernel draws the same numbers again to rebuild the mask for the scores it
      // recomputes; beside its heavier tensor work less of it shows: cuDNN's backward at that
      // shape takes 0.121 ms more with dropout, 12 lane cycles a kept score beside the mask's
      // own cycle (fitted on that row alone; the GPT blocks' rows are the check: README).
      {"flash_dropout_backward", 12},
      {"layernorm", 6},
      {"rmsnorm", 4},
      {"rotary", 3},
      {"embedding", 1},
      {"cross_entropy", 28},
      {"bias_grad", 1},
      {"adam", 30},
      {"sgd", 2},
      {"add_backward", 1},
      {"bias_add_backward", 1},
      {"mul_backward", 2},
      {"scale_backward", 1},
      {"mask_backward", 1},
      {"causal_mask_backward", 1},
      {"dropout_backward", 1},
      {"relu_backward", 1},
      {"gelu_backward", 30},
      {"gelu_tanh_backward", 40},
      {"silu_backward", 25},
      {"tanh_backward", 2},
      {"softmax_backward", 3},
      {"layernorm_backward", 10},
      {"rmsnorm_backward", 8},
      {"rotary_backward", 3},
      {"embedding_backward", 2},
      {"cross_entropy_backward", 2},
      // Mixture of experts: top-k selection (compare-exchange per element), token permutation
      // (a copy), gate-weighted combine (multiply-add).
      {"top_k", 4},
      {"permute", 1},
      {"combine", 2},
      {"top_k_backward", 1},
      {"permute_backward", 1},
      {"combine_backward", 3},
  };
  return table;
}

const double* FindVectorCycles(std::string_view function) {
  static const std::unordered_map<std::string_view, double> hashed = [] {
    std::unordered_map<std::string_view, double> h;
    for (const auto& [name, cycles] : VectorCyclesPerElement()) h.emplace(name, cycles);
    return h;
  }();
  const auto it = hashed.find(function);
  return it == hashed.end() ? nullptr : &it->second;
}

double VectorCycles(const std::string& estimator, const std::string& op_name,
                    const std::string& function, const std::map<std::string, double>& overrides) {
  if (auto it = overrides.find(function); it != overrides.end()) return it->second;
  if (const double* cycles = FindVectorCycles(function)) return *cycles;
  std::string known;
  for (const auto& [name, c] : VectorCyclesPerElement()) {
    known += (known.empty() ? "" : ", ") + name;
  }
  throw UnsupportedOpError("estimator '" + estimator + "': op '" + op_name +
                           "': no cycle cost for vector function '" + function + "'; known: " +
                           known + ". Give one with estimator params: vector_cycles: {" + function +
                           ": CYCLES}");
}

}  // namespace phaze
