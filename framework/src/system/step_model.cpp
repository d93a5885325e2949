#include "phaze/system/step_model.hpp"

#include <algorithm>
#include <cmath>

namespace phaze {

std::string_view ToString(PipelineSchedule schedule) {
  switch (schedule) {
    case PipelineSchedule::k1F1B:
      return "1f1b";
    case PipelineSchedule::kInterleaved:
      return "interleaved";
    case PipelineSchedule::kGPipe:
      return "gpipe";
  }
  return "?";
}

std::string_view ToString(PipelineBubble bubble) {
  switch (bubble) {
    case PipelineBubble::kStages:
      return "stages";
    case PipelineBubble::kBottleneck:
      return "bottleneck";
    case PipelineBubble::kBound:
      return "bound";
  }
  return "?";
}

std::string_view ToString(PipelineSends sends) {
  return sends == PipelineSends::kBlocking ? "blocking" : "batched";
}

std::string_view ToString(HybridAllReduce when) {
  return when == HybridAllReduce::kOnceAStep ? "once_a_step" : "every_micro_batch";
}

std::string_view ToString(Sharding sharding) {
  switch (sharding) {
    case Sharding::kNone:
      return "none";
    case Sharding::kOptimizer:
      return "optimizer";
    case Sharding::kGradients:
      return "gradients";
    case Sharding::kParameters:
      return "parameters";
  }
  return "?";
}

std::int64_t ShardReplicas(const StepSettings& settings, std::int64_t t, std::int64_t d) {
  if (settings.sharding == Sharding::kNone || settings.shard_span <= 0 ||
      settings.shard_span >= t * d) {
    return d;
  }
  for (std::int64_t h = std::min(d, settings.shard_span / std::max<std::int64_t>(t, 1)); h > 1;
       --h) {
    if (d % h == 0) return h;
  }
  return 1;
}

std::string StepSettings::Validate() const {
  if (num_accelerators < 1) return "num_accelerators must be >= 1";
  if (global_batch < 1 || micro_batch < 1) return "global_batch and micro_batch must be >= 1";
  if (global_batch % micro_batch != 0) {
    return "global_batch " + std::to_string(global_batch) + " is not a multiple of micro_batch " +
           std::to_string(micro_batch);
  }
  if (std::string err = network.Validate(); !err.empty()) return err;
  if (virtual_stages < 1) return "virtual_stages must be >= 1";
  if ((virtual_stages > 1) != (schedule == PipelineSchedule::kInterleaved)) {
    return "virtual_stages > 1 goes with the interleaved schedule, and only with it";
  }
  if (recompute && schedule != PipelineSchedule::k1F1B) {
    return "the paper's stage recompute is defined for the 1f1b schedule only";
  }
  if (shard_span < 0) return "shard_span must be >= 0 (0: shard over all data-parallel replicas)";
  if (!(gradient_reduction_overlap >= 0 && gradient_reduction_overlap <= 1)) {
    return "gradient_reduction_overlap must be in [0, 1]";
  }
  if (!(gradient_reduction_bytes_per_weight_byte > 0) ||
      !std::isfinite(gradient_reduction_bytes_per_weight_byte)) {
    return "gradient_reduction_bytes_per_weight_byte must be > 0";
  }
  return "";
}

}  // namespace phaze
