#include "phaze/graph/loss_kernel.hpp"

namespace phaze {

std::string_view ToString(LossKernel kernel) {
  return kernel == LossKernel::kTorch ? "torch" : "megatron";
}

KernelPasses LossPasses(LossKernel kernel, bool backward) {
  KernelPasses p;
  if (kernel == LossKernel::kMegatron && !backward) {
    p.writes = 3;   // the cast's FP32 copy, the subtraction, the exponentials (in place)
    p.reads = 5;    // max, subtract, exp, sum, divide (which writes the op's probabilities)
    p.kernels = 5;  // six in all
  } else if (kernel == LossKernel::kMegatron) {
    p.writes = 1;   // grad_input.mul_(grad_output) on the kept probabilities, in place
    p.reads = 1;    // the cast back to 16 bits (which writes the op's gradient)
    p.kernels = 1;  // two in all
    p.held_bytes = 2;  // that 16-bit gradient, beside the kept FP32 probabilities it came from
  } else if (!backward) {
    p.writes = 1;   // the cast's FP32 copy
    p.reads = 3;    // the log-softmax's max, sum and write passes (it writes the op's output)
    p.kernels = 2;  // cast, log-softmax, the labels' gather
  } else {
    p.writes = 2;   // the zeroed gradient (labels scattered in), the log-softmax backward's
    p.reads = 3;    // the log-softmax backward's sum and write passes over it, the cast's read
    p.kernels = 3;  // zeros, scatter, log-softmax backward, the cast back
    // The zeroed gradient and the log-softmax backward's output, both FP32, beside the kept
    // log-probabilities (the cast's 16-bit result comes once the first is freed: 6 < 8).
    p.held_bytes = 8;
  }
  return p;
}

namespace {

OperatorGraph WithPasses(const OperatorGraph& g, const KernelPasses& passes) {
  return Rewritten(
      g, [](int, Tensor&) {},
      [&](int, Operator& op) {
        if (op.kind == OpKind::kLoss) op.passes = passes;
      });
}

}  // namespace

LayerGraph WithLossKernel(const LayerGraph& graph, LossKernel kernel) {
  LayerGraph out = graph;
  for (UniqueLayer& u : out.unique_layers) {
    bool loss = false;
    for (const Operator& op : u.forward.Ops()) loss = loss || op.kind == OpKind::kLoss;
    if (!loss) continue;
    u.forward = WithPasses(u.forward, LossPasses(kernel, false));
    u.backward = WithPasses(u.backward, LossPasses(kernel, true));
    FinalizeLayerMemory(u, out.dtype_bytes, out.optimizer);
  }
  return out;
}

}  // namespace phaze
