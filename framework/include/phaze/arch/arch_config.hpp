// One accelerator architecture of the template (DESIGN §4): num_tc tensor cores of pe_x × pe_y
// MACs, num_vc vector cores of pe_vc lanes, a global buffer (GLB) shared by all cores, a per-core
// L2 buffer, HBM. (The cluster's network is phaze/network/network.hpp.) Presets live in share/arch/*.yaml
// (schema in share/arch/README.md); `LoadArchConfig` accepts a preset name or a file.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "phaze/core/config_node.hpp"
#include "phaze/core/json.hpp"

namespace phaze {

struct ArchConfig {
  std::string name;  // preset name, or a generated "tc8x128x128-vc2x128-glb128MiB"
  std::int64_t num_tc = 1;
  std::int64_t num_vc = 1;
  std::int64_t pe_x = 1;   // tensor-core array rows (reduction dimension of a weight tile)
  std::int64_t pe_y = 1;   // tensor-core array columns (output dimension of a weight tile)
  std::int64_t pe_vc = 1;  // vector-core lanes
  std::int64_t glb_bytes = 0;
  double glb_bandwidth_words_per_cycle = 4096;  // shared by every core using it
  std::int64_t l2_tc_bytes = 0;                 // per tensor core
  std::int64_t l2_vc_bytes = 0;                 // per vector core
  std::int64_t hbm_bytes = 0;
  double hbm_bandwidth_bytes_per_s = 1.2e12;
  double frequency_hz = 1.05e9;
  std::int64_t word_bytes = 2;  // bf16 / fp16 operands
  // The tensor cores' FP8 rate as a multiple of their 16-bit rate (H100: 2, 1,979 against 989
  // TFLOP/s dense); 0: no FP8 (an FP8 GEMM on this device is an error).
  double fp8_tensor_ratio = 0;
  // Fraction of a collective's time that may run concurrently with the device's compute in a
  // layer's schedule. 1 (the template): collectives run on dedicated links and DMA, beside the
  // cores. A GPU runs NCCL's kernels on its SMs, in the order the framework issues them: its
  // preset gives the fraction the overlap achieves (0: a collective holds the whole device).
  double collective_overlap = 1.0;
  // Seconds the host (framework, Python, driver) takes to issue one kernel. The host issues ahead
  // of the device, so a layer's pass lasts max(device makespan, kernels · host_kernel_s): small
  // kernels at small batch leave a GPU host-bound. 0 (the template): the device is fed in time.
  double host_kernel_s = 0;
  // A real chip's board power: `tdp_w`, the limit its calibration was measured at (its TDP), and
  // `power_limit_w`, the one it runs at (0: the TDP). Below the TDP the firmware lowers the clock
  // of the work that was power-bound at it, the tensor cores' (DeviceModel::PowerLimitClockScale).
  // 0 (the template): no limit.
  double tdp_w = 0;
  double power_limit_w = 0;
  // Named parameters an estimator plugin may read for this device (e.g. the device model's fitted
  // kernel efficiency); the framework only carries and echoes them. Sorted, so deterministic.
  std::map<std::string, double> calibration;
  // The energy model's technology parameters for this device (EnergyTechnology's keys: a real
  // chip's node, die and HBM); empty: the template's 22 nm defaults. Sorted, so deterministic.
  std::map<std::string, double> energy;
  // What the die is (DESIGN §11): its area for static power and cost (0: the area model's 22 nm
  // area of the template chip), its process node in nm (the cost model's wafer price and defect
  // density), and what an hour of it costs when it is rented (0: from the cost model).
  double die_area_mm2 = 0;
  double node_nm = 22;
  double hourly_usd = 0;
  // The estimator this device is calibrated for (a fixed device's preset names it, e.g. `gpu`);
  // `phaze predict` uses it when the run config names no estimator. Empty: none.
  std::string estimator;

  // 2 FLOPs per MAC per cycle on every tensor core.
  double PeakTensorFlopsPerS() const {
    return 2.0 * static_cast<double>(num_tc * pe_x * pe_y) * frequency_hz;
  }
  // The L2 rule of the paper's space: 16 bytes per PE (8 two-byte words), at least 1 KiB.
  static std::int64_t DefaultL2Bytes(std::int64_t pes) { return pes * 16 < 1024 ? 1024 : pes * 16; }
  // The HBM in GiB (2^30 bytes), and this device with `gib` of it instead (a run's hbm_gib sweep:
  // every size is a device of its own).
  double HbmGiB() const { return static_cast<double>(hbm_bytes) / 1073741824.0; }
  ArchConfig WithHbmGiB(double gib) const;
  // "tc8x128x128-vc2x128-glb128MiB"
  std::string GeneratedName() const;
  // Empty when valid, else what is wrong.
  std::string Validate() const;
  Json ToJson() const;
};

// Parses an architecture file (schema in share/arch/README.md) with located errors.
ArchConfig ParseArchConfig(const ConfigNode& root);
// A preset name ("tpuv4" → <share>/arch/tpuv4.yaml) or a path to a YAML file.
ArchConfig LoadArchConfig(const std::string& name_or_path);

}  // namespace phaze
