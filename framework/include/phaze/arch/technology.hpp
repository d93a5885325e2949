// What a chip's technology is, as numbers an architecture file may set: the device model's
// calibrated parameters (`calibration:`, DeviceTechnology) and the energy model's (`energy:`,
// EnergyTechnology). Their names, defaults and valid ranges live here, beside ArchConfig, so an
// architecture file is checked where it enters (arch_config.cpp); the physics that uses them is in
// estimate/ (device_model.hpp, energy_model.hpp, which say what each parameter means).
#pragma once

#include <string>

namespace phaze {

// The device model's technology parameters (estimate/device_model.hpp). The defaults are the
// A100's, fitted on measured runs by share/validation/fit.py.
struct DeviceTechnology {
  double gemm_efficiency = 0.7727;    // fraction of a group's tensor peak a GEMM tile reaches
  double memory_efficiency = 0.762;   // fraction of HBM bandwidth memory-bound kernels reach
  double kernel_overhead_s = 1.461e-5;  // device-side launch, ramp and tail per kernel
  double concurrent_kernels = 1;      // 1: independent ops may share the cores; 0: one at a time
  double wave_quantization = 1;       // share of a GEMM's partial last wave left idle (1: whole
                                      // waves; 0: the tiles' work balanced over the units)
  // gemm_efficiency's counterparts for the GEMMs inside a fused attention kernel
  // (training.attention fused), forward and backward: FlashAttention-2 reaches up to 73% of the
  // A100's peak in its forward and less in its backward (Dao 2023); not measured on an A100 here.
  double attention_efficiency = 0.72;
  double attention_backward_efficiency = 0.6;
  // The FP8 GEMMs of the backward pass accumulate exactly (Transformer Engine's split accumulator
  // for dgrad and wgrad; torchao's use_fast_accum=False): the fraction of the forward's
  // fast-accumulation FP8 rate they reach. Measured on an H200 (share/validation/kernels/
  // fp8_recipe.py: the geometric mean of 9 input- and weight-gradient GEMMs' fast/exact time
  // ratios; 0.937 on the 9 held out).
  double fp8_exact_accumulation = 0.94;
  // The fraction of the tensor peak a weight GEMM with an odd n or k reaches (its rows are not
  // aligned for the tensor cores' loads: an unpadded vocabulary's LM head). Measured on an H200:
  // cuBLAS runs the unpadded GPT-2 head (50,257 words) at 94–159 TFLOP/s, about the chip's FP16
  // rate without tensor cores, against 550–700 padded: 0.14 fitted on 6 such GEMMs, 10.7% mean
  // |error| on 6 held out (share/validation/kernels/lmhead.py).
  double unaligned_gemm_efficiency = 0.14;

  // The keys above, in order (calibration maps, params:).
  static const char* const kKeys[9];
  // Empty when `value` is a valid `key` (one of kKeys), else what is wrong ("no technology
  // parameter …; known: …" for another key). Architecture files are checked with it at load.
  static std::string Check(const std::string& key, double value);
  double Get(const std::string& key) const;
  void Set(const std::string& key, double value);
};

// The energy model's technology parameters (estimate/energy_model.hpp): defaults for the
// template's 22 nm node, with sources in share/energy/README.md.
struct EnergyTechnology {
  double mac_pj = 2.0;                  // one 16-bit MAC with its PE's register accesses
  double lane_op_pj = 1.0;              // one vector-lane operation (a cycle of one lane)
  double sram_pj_per_byte_1mib = 6.25;  // a byte read or written in a 1 MiB SRAM
  double hbm_pj_per_bit = 3.9;          // HBM2 (O'Connor et al., MICRO 2017)
  double static_w_per_mm2 = 0.05;       // leakage per mm² of die (an assumption, README)
  double idle_w = 20;                   // per device: HBM refresh, PHYs, board (an assumption)
  // The clock, relative to the one the TDP allows, below which the supply voltage stops falling
  // with it (DeviceModel::PowerLimitClockScale; 0: no floor). Fitted on an H100's power-capped
  // training throughput (LitGPT's Llama 3 8B at 300 W, share/validation/README.md).
  double voltage_floor_clock = 0.84;

  static const char* const kKeys[7];
  // Empty when `value` is valid for `key`, else what is wrong (unknown keys name the known ones).
  static std::string Check(const std::string& key, double value);
  double Get(const std::string& key) const;
  void Set(const std::string& key, double value);
};

}  // namespace phaze
