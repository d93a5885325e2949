// The flags `phaze predict` and `phaze plan` share: the device, its HBM, the network, sharding.
#include "commands.hpp"
#include "phaze/core/limits.hpp"

namespace phaze::cli {

ArchConfig DeviceFromFlags(const boost::program_options::variables_map& vm, RunConfig& run) {
  ArchConfig arch =
      ReadFlag("--arch", [&] { return LoadArchConfig(vm["arch"].as<std::string>()); });
  // A fixed device's preset names the estimator it is calibrated for (the device model for the
  // A100 and H100 presets); a run config that names an estimator keeps its own.
  if (!run.estimator.name_node && !arch.estimator.empty()) {
    run.estimator.name = arch.estimator;
  }
  // The plan's HBM is the device's: --hbm-gib makes a device with that much of it.
  if (vm.count("hbm-gib")) {
    const double gib = vm["hbm-gib"].as<double>();
    if (!(gib * 1073741824.0 >= 1) ||
        !(gib <= static_cast<double>(limits::kMemoryBytes) / 1073741824.0)) {
      throw UsageError("--hbm-gib: expected a size of at least 1 byte and at most " +
                       std::to_string(limits::kMemoryBytes >> 30) + " GiB (2^50 bytes)");
    }
    arch = arch.WithHbmGiB(gib);
  }
  return arch;
}

void NetworkFromFlags(const boost::program_options::variables_map& vm, RunConfig& run) {
  if (vm.count("system")) {
    run.cluster.network =
        ReadFlag("--system", [&] { return Network::LoadSystem(vm["system"].as<std::string>()); });
  }
}

Sharding ParseSharding(const std::string& flag, const std::string& word) {
  for (Sharding s :
       {Sharding::kNone, Sharding::kOptimizer, Sharding::kGradients, Sharding::kParameters}) {
    if (ToString(s) == word) return s;
  }
  throw UsageError(flag + ": expected none, optimizer, gradients or parameters, found '" + word +
                   "'");
}

Precision ParsePrecision(const std::string& flag, const std::string& word) {
  for (Precision p : {Precision::kBf16, Precision::kFp16, Precision::kFp8}) {
    if (ToString(p) == word) return p;
  }
  throw UsageError(flag + ": expected bf16, fp16 or fp8, found '" + word + "'");
}

AttentionKernel ParseAttention(const std::string& flag, const std::string& word) {
  for (AttentionKernel k : {AttentionKernel::kUnfused, AttentionKernel::kFlash}) {
    if (ToString(k) == word) return k;
  }
  throw UsageError(flag + ": expected unfused or flash, found '" + word + "'");
}

}  // namespace phaze::cli
