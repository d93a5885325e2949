#include "phaze/graph/loss_kernel.hpp"

#include <algorithm>
#include <string>

namespace phaze {

std::string_view ToString(LossKernel kernel) {
  switch (kernel) {
    case LossKernel::kTorch:
      return "torch";
    case LossKernel::kCompiled:
      return "compiled";
    case LossKernel::kMegatron:
      break;
  }
  return "megatron";
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
  } else if (kernel == LossKernel::kCompiled && !backward) {
    p.reads = 1;       // the logits' second read (max, then the sum of exponentials)
    p.word_bytes = 2;  // of 16-bit logits
  } else if (kernel == LossKernel::kCompiled) {
    p.held_bytes = 2;  // its 16-bit gradient, beside the kept 16-bit logits
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

// The compiled loss keeps the 16-bit logits and a log-sum-exp per row, not the FP32
// probabilities (loss_kernel.hpp): in `layer`'s forward the loss op's kept output becomes one
// FP32 value a row and it saves its input too; in its backward the saved copy the op reads
// becomes the logits (renamed "saved:LOGITS", 2 bytes a value). The row values the backward also
// reads (4 bytes a row, 1/64K of the logits' bytes at a 128K vocabulary) are not priced.
void KeepLogits(UniqueLayer& layer) {
  const OperatorGraph& fw = layer.forward;
  int op_index = -1;
  for (std::size_t i = 0; i < fw.Ops().size(); ++i) {
    if (fw.Ops()[i].kind == OpKind::kLoss) op_index = static_cast<int>(i);
  }
  const Operator& loss = fw.GetOp(op_index);
  const Tensor& logits = fw.GetTensor(loss.inputs.at(0));
  const int kept = loss.saved.at(0);
  const std::int64_t rows =
      logits.elements / std::max<std::int64_t>(1, loss.vector.at(0).row_elements);
  const std::string kept_name = fw.GetTensor(kept).name;
  const std::string logits_name = logits.name;
  const std::int64_t logits_elements = logits.elements, logits_bytes = logits.dtype_bytes;
  layer.forward = Rewritten(
      fw,
      [&](int i, Tensor& t) {
        if (i == kept) t.elements = rows;
      },
      [&](int i, Operator& op) {
        if (i == op_index) op.saved = {op.inputs.at(0), kept};
      });
  const std::string saved_name = "saved:" + kept_name;
  const bool free = layer.backward.FindTensor("saved:" + logits_name) < 0;
  layer.backward = Rewritten(
      layer.backward,
      [&](int, Tensor& t) {
        if (t.name != saved_name) return;
        t.elements = logits_elements;
        t.dtype_bytes = logits_bytes;
        if (free) t.name = "saved:" + logits_name;
      },
      [](int, Operator&) {});
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
    if (kernel == LossKernel::kCompiled) KeepLogits(u);
    FinalizeLayerMemory(u, out.dtype_bytes, out.optimizer);
  }
  return out;
}

}  // namespace phaze
