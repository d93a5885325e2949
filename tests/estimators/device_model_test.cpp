// The device model (phaze/estimate/device_model.hpp) against hand-computed cases: the A100 as a
// GPU (cuBLAS's tiles in waves over the SMs), a TPU-like chip (MXU-sized tiles, the reduction
// padded to the array), one tensor core of a template chip, the GLB's re-reads, lane-bound vector
// ops and the shared technology parameters.
#include "phaze/estimate/device_model.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <tuple>

#include "phaze/estimate/energy_model.hpp"
#include "phaze/estimate/estimate_cache.hpp"
#include "phaze/graph/attention_kernel.hpp"
#include "phaze/graph/graph_builder.hpp"
#include "phaze/graph/loss_kernel.hpp"
#include "phaze/graph/model_spec.hpp"
#include "phaze/plugin/registry.hpp"
#include "plugin_registry.hpp"
#include "test_util.hpp"

namespace phaze {
namespace {

std::shared_ptr<Estimator> Make(const std::string& name, const std::string& params = "") {
  return testing::BuiltPlugins().CreateEstimator(
      name, params.empty() ? ConfigNode::EmptyMap("test", "estimator.params")
                           : ConfigNode::ParseString(params, "p.yaml"));
}

TEST(DeviceModel, A100GemmWavesMemoryFloorAndOverheadByHand) {
  ArchConfig a100 = LoadArchConfig("a100-sxm-80gb");
  a100.calibration = {{"gemm_efficiency", 0.5}, {"memory_efficiency", 0.5},
                      {"kernel_overhead_s", 1e-5}, {"concurrent_kernels", 0}};
  const auto gpu = Make("device");
  // An SM (a core group: 432 / 108 = 4 tensor cores of 256 MACs) at 1.41 GHz; its share of the
  // L2 is 2560 words · 2 bytes · 1.41 GHz / 108; a tile lasts the longer of its FLOPs at half
  // efficiency and its (tm + tn)·k operand bytes through the L2; the fastest tile wins.
  EXPECT_EQ(DeviceModel::TensorCoresPerGroup(a100), 4);
  EXPECT_EQ(DeviceModel::Groups(a100), 108);
  const double sm = 2.0 * 4 * 256 * 1.41e9;
  const double l2 = 2560.0 * 2 * 1.41e9 / 108;
  auto expected = [&](double m, double n, double k) {
    double best = 1e300;
    for (auto [tm, tn] : {std::pair{256.0, 128.0}, {128.0, 256.0}, {128.0, 128.0}, {128.0, 64.0},
                          {64.0, 128.0}, {64.0, 64.0}}) {
      const double waves = std::ceil(std::ceil(m / tm) * std::ceil(n / tn) / 108);
      best = std::min(best, waves * std::max(2 * tm * tn * k / (sm * 0.5), (tm + tn) * 2 * k / l2));
    }
    return best + 1e-5;
  };
  // 4096³: 128 × 64 tiles, 2048 of them in ⌈2048/108⌉ = 19 waves of 46.5 µs (128² tiles would
  // need 10 waves of 93 µs): 883 µs + the kernel overhead.
  OpEstimate e = gpu->Estimate(OpWork::Gemm({1, 4096, 4096, 4096}, 2), a100, Pass::kForward);
  EXPECT_DOUBLE_EQ(e.all_cores_s, expected(4096, 4096, 4096));
  EXPECT_NEAR(e.all_cores_s, 19 * 2.0 * 128 * 64 * 4096 / (sm * 0.5) + 1e-5, 1e-12);
  // One CUDA stream: one SM is never worth choosing.
  EXPECT_DOUBLE_EQ(e.single_core_s, e.all_cores_s * 108);
  for (auto [m, n, k] : {std::tuple{1536.0, 1152.0, 4096.0}, {1537.0, 1152.0, 4096.0},
                         {8192.0, 1024.0, 1024.0}, {2048.0, 3072.0, 1024.0}}) {
    e = gpu->Estimate(OpWork::Gemm({1, static_cast<std::int64_t>(m), static_cast<std::int64_t>(n),
                                    static_cast<std::int64_t>(k)}, 2),
                      a100, Pass::kForward);
    EXPECT_DOUBLE_EQ(e.all_cores_s, expected(m, n, k)) << m << "x" << n << "x" << k;
  }
  // A thin GEMM (k = 16) is memory-bound: operands and result at half the HBM bandwidth.
  e = gpu->Estimate(OpWork::Gemm({1, 128 * 108, 128, 16}, 2), a100, Pass::kForward);
  const double bytes = 2.0 * (128 * 108 * 16 + 16 * 128 + 128 * 108 * 128);
  EXPECT_DOUBLE_EQ(e.all_cores_s, bytes / (2.039e12 * 0.5) + 1e-5);
  // GELU on 1 Mi bf16 elements: read and write 2 MiB each (its 16 cycles per element on
  // 108 × 64 lanes take 1.7 µs, less than the 4.1 µs of memory).
  e = gpu->Estimate(OpWork::Vector("gelu", 1 << 20, 2), a100, Pass::kForward);
  EXPECT_DOUBLE_EQ(e.all_cores_s, 4.0 * (1 << 20) / (2.039e12 * 0.5) + 1e-5);
  // params: override the preset's calibration.
  e = Make("device", "kernel_overhead_s: 0")
          ->Estimate(OpWork::Vector("gelu", 1 << 20, 2), a100, Pass::kForward);
  EXPECT_DOUBLE_EQ(e.all_cores_s, 4.0 * (1 << 20) / (2.039e12 * 0.5));
  EXPECT_THROW(Make("device", "gemm_efficiency: 1.5"), ConfigError);
  EXPECT_THROW(Make("device", "memory_efficency: 0.5"), ConfigError);
  // Scale and causal mask are folded into the GEMM (alpha) and the fused softmax: only their
  // arithmetic, one operation per element on 108 × 64 lanes at 1.41 GHz.
  const double lanes = 108.0 * 64 * 1.41e9;
  OpWork scores = OpWork::Gemm({16, 2048, 2048, 128}, 2, /*weight_operand=*/false);
  const double plain = gpu->Estimate(scores, a100, Pass::kForward).all_cores_s;
  const std::int64_t n = 16LL * 2048 * 2048;
  scores.vector = {{"scale", n, 1}, {"causal_mask", n, 1}};
  EXPECT_DOUBLE_EQ(gpu->Estimate(scores, a100, Pass::kForward).all_cores_s, plain + 2 * n / lanes);
  e = gpu->Estimate(OpWork::Vector("causal_mask_backward", n, 2), a100, Pass::kBackward);
  EXPECT_DOUBLE_EQ(e.all_cores_s, n / lanes);
  EXPECT_EQ(e.kernels, 0);
  // A dropout epilogue is a pass over the output: read and write 2 bytes per element, a kernel.
  scores.vector = {{"dropout", n, 1}};
  EXPECT_DOUBLE_EQ(gpu->Estimate(scores, a100, Pass::kForward).all_cores_s,
                   plain + 4.0 * n / (2.039e12 * 0.5) + 1e-5);
  EXPECT_EQ(gpu->Estimate(scores, a100, Pass::kForward).kernels, 2);
  // `gpu` is the same model under its planner name.
  EXPECT_DOUBLE_EQ(Make("gpu")->Estimate(scores, a100, Pass::kForward).all_cores_s,
                   gpu->Estimate(scores, a100, Pass::kForward).all_cores_s);
}

// A TPU-like chip: 8 tensor cores of 128 × 128 and 2 vector cores → 2 groups (TensorCores) of 4
// MXUs in a 2 × 2 grid; tiles of 2·128·2 = 512 rows and columns upward.
ArchConfig TpuLike(std::int64_t l2_tc_bytes) {
  ArchConfig a;
  a.name = "tpu-like";
  a.num_tc = 8;
  a.num_vc = 2;
  a.pe_x = a.pe_y = 128;
  a.pe_vc = 1024;
  a.glb_bytes = 128LL << 20;
  a.glb_bandwidth_words_per_cycle = 4096;
  a.l2_tc_bytes = l2_tc_bytes;
  a.hbm_bandwidth_bytes_per_s = 1.2e12;
  a.frequency_hz = 1.05e9;
  a.calibration = {{"gemm_efficiency", 1}, {"memory_efficiency", 1}, {"kernel_overhead_s", 0},
                   {"concurrent_kernels", 0}};
  return a;
}

// Partial waves by hand. Two groups of one 4 × 4 tensor core whose buffer holds only the 2 × 2
// tile (8 × 8 outputs), a GLB too fast to matter, 1 GHz, full efficiency: a tile of reduction k
// lasts 2·8·8·k / (2·16 MACs · 1e9) = 4·k ns. A 24 × 8 × 16 GEMM is 3 tiles of 64 ns on 2
// groups: 2 whole waves (128 ns) at wave_quantization 1, 1.5 waves (96 ns) at 0, 1.75 at 0.5.
TEST(DeviceModel, PartialWavesByHand) {
  ArchConfig a;
  a.name = "two-groups";
  a.num_tc = 2;
  a.num_vc = 2;
  a.pe_x = a.pe_y = 4;
  a.pe_vc = 4;
  a.glb_bytes = 1 << 20;
  a.glb_bandwidth_words_per_cycle = 1 << 20;
  a.l2_tc_bytes = 256;  // 2·(2·4 + 2·4)·4·2 = 256 bytes: the 2 × 2 tile only
  a.hbm_bandwidth_bytes_per_s = 1e15;
  a.frequency_hz = 1e9;
  ASSERT_EQ(DeviceModel::Tiles(a, 1).size(), 1u);
  const GemmShape g{1, 24, 8, 16};
  const double glb_share = (1 << 20) * 2.0 * 1e9 / 2;
  auto seconds = [&](double q) {
    DeviceTechnology t;
    t.gemm_efficiency = 1;
    t.wave_quantization = q;
    return DeviceModel::GemmComputeSeconds(g, a, 1, 2, glb_share, t);
  };
  EXPECT_NEAR(seconds(1), 128e-9, 1e-12);
  EXPECT_NEAR(seconds(0), 96e-9, 1e-12);
  EXPECT_NEAR(seconds(0.5), 112e-9, 1e-12);
  // Through the estimator, with the calibration map; out-of-range values are refused there.
  a.calibration = {{"gemm_efficiency", 1}, {"memory_efficiency", 1}, {"kernel_overhead_s", 0},
                   {"concurrent_kernels", 0}, {"wave_quantization", 0}};
  const auto gpu = Make("device");
  EXPECT_NEAR(gpu->Estimate(OpWork::Gemm(g, 2), a, Pass::kForward).all_cores_s, 96e-9, 1e-12);
  a.calibration["wave_quantization"] = 1.5;
  EXPECT_THROW(gpu->Estimate(OpWork::Gemm(g, 2), a, Pass::kForward), UnsupportedOpError);
}

// FP8 on the H100 (fp8_tensor_ratio 2): a compute-bound GEMM's tile arithmetic and its operand
// bytes through the L2 both halve, so the same tile wins and the GEMM takes half its 16-bit time
// (plus the same kernel overhead). 16-bit inputs still to cast add a kernel of their own reading 2
// and writing 1 byte per element at memory_efficiency of the HBM. An A100 has no FP8 rate: the op
// is refused, naming it and the architecture.
TEST(DeviceModel, Fp8GemmsAtTheFp8RateWithTheirCasts) {
  ArchConfig h100 = LoadArchConfig("h100-sxm-80gb");
  h100.fp8_tensor_ratio = 2;  // the datasheet's (the preset has the measured 1.88)
  h100.calibration = {{"gemm_efficiency", 0.5}, {"memory_efficiency", 0.5},
                      {"kernel_overhead_s", 1e-5}, {"concurrent_kernels", 0}};
  const auto gpu = Make("device");
  OpWork bf16 = OpWork::Gemm({1, 8192, 8192, 8192}, 2);
  OpWork fp8 = bf16;
  fp8.fp8 = true;
  const double t16 = gpu->Estimate(bf16, h100, Pass::kForward).all_cores_s - 1e-5;
  const double t8 = gpu->Estimate(fp8, h100, Pass::kForward).all_cores_s - 1e-5;
  EXPECT_NEAR(t8, t16 / 2, 1e-12 * t16);
  // The arithmetic bound by hand: 132 SMs of 4 tensor cores of 16 × 32 MACs at 1.83 GHz, half
  // efficiency; 8192² outputs in 256 × 128 tiles are 2048 tiles, ⌈2048 / 132⌉ = 16 waves.
  const double sm16 = 2.0 * 4 * 512 * 1.83e9 * 0.5;
  EXPECT_NEAR(t16, 16 * 2.0 * 256 * 128 * 8192 / sm16, 1e-9 * t16);
  fp8.fp8_cast_elements = 1 << 20;
  const OpEstimate cast = gpu->Estimate(fp8, h100, Pass::kForward);
  EXPECT_NEAR(cast.all_cores_s - 2e-5, t8 + 3.0 * (1 << 20) / (3.35e12 * 0.5), 1e-12);
  EXPECT_EQ(cast.kernels, 2);
  // The backward's FP8 GEMMs accumulate exactly: this compute-bound one at 0.94 of the rate
  // (DeviceTechnology::fp8_exact_accumulation's default), a BF16 one unchanged.
  fp8.fp8_cast_elements = 0;
  EXPECT_NEAR(gpu->Estimate(fp8, h100, Pass::kBackward).all_cores_s - 1e-5, t8 / 0.94, 1e-9 * t8);
  EXPECT_EQ(gpu->Estimate(bf16, h100, Pass::kBackward).all_cores_s,
            gpu->Estimate(bf16, h100, Pass::kForward).all_cores_s);
  // Current scaling's passes (OpWork::fp8_scaling_bytes) at memory_efficiency of the HBM, in two
  // kernels of their own (the amax and the cast).
  fp8.fp8_scaling_bytes = 7 << 20;
  const OpEstimate scaled = gpu->Estimate(fp8, h100, Pass::kForward);
  EXPECT_NEAR(scaled.all_cores_s - 3e-5, t8 + 7.0 * (1 << 20) / (3.35e12 * 0.5), 1e-12);
  EXPECT_EQ(scaled.kernels, 3);
  fp8.fp8_scaling_bytes = 0;
  // A weight GEMM with an odd n or k (an unpadded vocabulary) runs at unaligned_gemm_efficiency
  // (0.14) of the peak instead of gemm_efficiency (0.5 here): as the aligned GEMM of the same
  // tiles on a chip whose gemm_efficiency is 0.14; an odd m (the tokens, no operand's row)
  // changes nothing.
  ArchConfig slow = h100;
  slow.calibration["gemm_efficiency"] = 0.14;
  const double t_slow = gpu->Estimate(bf16, slow, Pass::kForward).all_cores_s;
  EXPECT_GT(t_slow, 3 * t16);
  for (const GemmShape odd : {GemmShape{1, 8192, 8191, 8192}, GemmShape{1, 8192, 8192, 8191}}) {
    const double t_odd = gpu->Estimate(OpWork::Gemm(odd, 2), h100, Pass::kForward).all_cores_s;
    EXPECT_NEAR(t_odd, t_slow, 1e-3 * t_slow) << odd.n << " " << odd.k;
  }
  EXPECT_NEAR(
      gpu->Estimate(OpWork::Gemm({1, 8191, 8192, 8192}, 2), h100, Pass::kForward).all_cores_s -
          1e-5,
      t16, 1e-3 * t16);
  fp8.name = "mlp.fc1";
  try {
    gpu->Estimate(fp8, LoadArchConfig("a100-sxm-80gb"), Pass::kForward);
    ADD_FAILURE() << "an FP8 GEMM on an A100 was costed";
  } catch (const UnsupportedOpError& e) {
    EXPECT_NE(std::string(e.what()).find("op 'mlp.fc1' is an FP8 GEMM and architecture "
                                         "'a100-sxm-80gb' has no FP8 tensor rate"),
              std::string::npos)
        << e.what();
  }
  // The paper's analytic model has no FP8 rate either.
  EXPECT_THROW(Make("analytic")->Estimate(fp8, h100, Pass::kForward), UnsupportedOpError);
}

// Under a board power limit below the TDP the calibration was measured at, a GEMM's clock falls
// by the cube root of the dynamic power's share (f·V², V following f), the static power being
// the energy model's: on the H100 preset 20 W + 0.05 W/mm² · 814 mm² = 60.7 W, so at 500 W of
// 700 W the tensor cores run at ∛(439.3 / 639.3) = 0.8825 of their clock — the 0.915 of the 700 W
// throughput LitGPT's Llama 3 8B measured at 500 W on the same 94 GB H100 (Mayr et al. 2026,
// arXiv 2603.16164, Table 4) has its memory-bound kernels in it, which keep their speed here.
// At or above the TDP, or without one, nothing changes; a compute-bound FP8 GEMM slows the same.
TEST(DeviceModel, PowerLimitSlowsTheTensorCoresByTheCubeRootOfTheDynamicShare) {
  ArchConfig h100 = LoadArchConfig("h100-sxm-80gb");
  ASSERT_EQ(h100.tdp_w, 700);
  h100.calibration = {{"gemm_efficiency", 0.5},
                      {"memory_efficiency", 0.5},
                      {"kernel_overhead_s", 1e-5},
                      {"concurrent_kernels", 0}};
  const auto gpu = Make("device");
  OpWork gemm = OpWork::Gemm({1, 8192, 8192, 8192}, 2);
  OpWork fp8 = gemm;
  fp8.fp8 = true;
  const OpWork add = OpWork::Vector("add", 1 << 26, 2);
  const auto time = [&](const OpWork& op, const ArchConfig& a) {
    return gpu->Estimate(op, a, Pass::kForward).all_cores_s - 1e-5;
  };
  ArchConfig capped = h100;
  capped.power_limit_w = 500;
  const double clock = std::cbrt((500 - 60.7) / (700 - 60.7));
  EXPECT_NEAR(DeviceModel::PowerLimitClockScale(capped), clock, 1e-12);
  EXPECT_NEAR(time(gemm, capped), time(gemm, h100) / clock, 1e-9 * time(gemm, h100));
  EXPECT_NEAR(time(fp8, capped), time(fp8, h100) / clock, 1e-9 * time(fp8, h100));
  EXPECT_DOUBLE_EQ(time(add, capped), time(add, h100));
  // Lane work inside a fused attention kernel (on chip: no bytes) runs at that kernel's clock.
  OpWork softmax = OpWork::Vector("flash_softmax", 1 << 26, 2);
  softmax.bytes_read = softmax.bytes_written = 0;
  softmax.attention_kernel = true;
  const auto lanes = [&](const ArchConfig& a) {
    return gpu->Estimate(softmax, a, Pass::kForward).all_cores_s;
  };
  EXPECT_NEAR(lanes(capped), lanes(h100) / clock, 1e-12 * lanes(capped));
  // Its switching energy (the MACs and their buffer reads) scales with V², the voltage following
  // the clock; the HBM's does not: the GEMM's dynamic power falls by clock³.
  const Energy e700 = EnergyModel::Op(gemm, h100), e500 = EnergyModel::Op(gemm, capped);
  EXPECT_NEAR(e500.compute_j, e700.compute_j * clock * clock, 1e-12 * e700.compute_j);
  EXPECT_NEAR(e500.on_chip_j, e700.on_chip_j * clock * clock, 1e-12 * e700.on_chip_j);
  EXPECT_DOUBLE_EQ(e500.memory_j, e700.memory_j);
  for (double limit : {700.0, 900.0}) {
    capped.power_limit_w = limit;
    EXPECT_EQ(DeviceModel::PowerLimitClockScale(capped), 1.0) << limit;
  }
  capped.power_limit_w = 50;  // below the static power: it cannot run
  const std::string refused = testing::ErrorOf([&] { DeviceModel::PowerLimitClockScale(capped); });
  EXPECT_NE(refused.find("power_limit_w 50 W leaves nothing above its static power (60.7 W"),
            std::string::npos)
      << refused;
  capped.tdp_w = 0;  // a template chip: no limit
  EXPECT_EQ(DeviceModel::PowerLimitClockScale(capped), 1.0);
  // The estimate cache tells the limits apart.
  const CachedEstimator cached(gpu);
  capped = h100;
  capped.power_limit_w = 500;
  EXPECT_EQ(cached.Estimate(gemm, h100, Pass::kForward).all_cores_s,
            gpu->Estimate(gemm, h100, Pass::kForward).all_cores_s);
  EXPECT_EQ(cached.Estimate(gemm, capped, Pass::kForward).all_cores_s,
            gpu->Estimate(gemm, capped, Pass::kForward).all_cores_s);
  EXPECT_EQ(cached.Misses(), 2);
}

// Below the voltage floor (the energy model's voltage_floor_clock f_v = 0.84 of the TDP's clock)
// the voltage stops following the clock: the dynamic power falls as f·f_v², not f³, so the clock
// falls as ρ / f_v² once ∛ρ < f_v. By hand on the H100 preset (P_static 60.7 W, TDP 700 W): at
// 600 W ρ = 539.3 / 639.3, ∛ρ = 0.945, above the floor; at 400 W ρ = 339.3 / 639.3 = 0.5307,
// ∛ρ = 0.810 < 0.84, so 0.5307 / 0.7056 = 0.7522; at 300 W 239.3 / 639.3 / 0.7056 = 0.5305 (∛ρ
// would be 0.721). The switching energy then scales with f_v², not the clock's square; a floor of
// 0 is the cube-root law everywhere.
TEST(DeviceModel, PowerLimitBelowTheVoltageFloorSlowsTheClockLinearly) {
  const ArchConfig h100 = LoadArchConfig("h100-sxm-80gb");
  ArchConfig capped = h100;
  const auto clock_at = [&](double watts) {
    capped.power_limit_w = watts;
    return DeviceModel::PowerLimitClockScale(capped);
  };
  EXPECT_NEAR(clock_at(600), std::cbrt(539.3 / 639.3), 1e-12);
  EXPECT_NEAR(clock_at(400), 339.3 / 639.3 / (0.84 * 0.84), 1e-12);
  EXPECT_NEAR(clock_at(300), 239.3 / 639.3 / (0.84 * 0.84), 1e-12);
  // Continuous at the floor: the limit whose ∛ρ is 0.84 gives 0.84 either way.
  EXPECT_NEAR(clock_at(60.7 + 639.3 * 0.84 * 0.84 * 0.84), 0.84, 1e-12);
  EXPECT_NEAR(clock_at(60.7 + 639.3 * 0.84 * 0.84 * 0.84 - 1e-6), 0.84, 1e-8);
  const OpWork gemm = OpWork::Gemm({1, 8192, 8192, 8192}, 2);
  capped.power_limit_w = 300;
  EXPECT_NEAR(DeviceModel::PowerLimitVoltageScale(capped), 0.84, 1e-12);
  const Energy full = EnergyModel::Op(gemm, h100), low = EnergyModel::Op(gemm, capped);
  EXPECT_NEAR(low.compute_j, full.compute_j * 0.84 * 0.84, 1e-12 * full.compute_j);
  capped.power_limit_w = 600;
  EXPECT_NEAR(DeviceModel::PowerLimitVoltageScale(capped), std::cbrt(539.3 / 639.3), 1e-12);
  EXPECT_EQ(DeviceModel::PowerLimitVoltageScale(h100), 1.0);
  capped.energy["voltage_floor_clock"] = 0;  // no floor: the cube root, energy × clock²
  EXPECT_NEAR(clock_at(300), std::cbrt(239.3 / 639.3), 1e-12);
  EXPECT_NEAR(EnergyModel::Op(gemm, capped).compute_j,
              full.compute_j * std::cbrt(239.3 / 639.3) * std::cbrt(239.3 / 639.3),
              1e-12 * full.compute_j);
  capped.energy["voltage_floor_clock"] = 1;  // the voltage never falls: the clock takes all of ρ
  EXPECT_NEAR(clock_at(300), 239.3 / 639.3, 1e-12);
  EXPECT_EQ(DeviceModel::PowerLimitVoltageScale(capped), 1.0);
  capped.energy["voltage_floor_clock"] = 1.5;
  EXPECT_NE(testing::ErrorOf([&] { clock_at(300); }).find("voltage_floor_clock"),
            std::string::npos);
}

// A fused attention kernel's GEMM (OpWork::attention_kernel) runs at attention_efficiency
// forward and attention_backward_efficiency backward, its operands once and the GLB at twice its
// bandwidth (the query tile stays on chip); its lane work launches no kernel.
TEST(DeviceModel, FusedAttentionAtItsOwnEfficiencies) {
  ArchConfig h100 = LoadArchConfig("h100-sxm-80gb");
  h100.calibration = {{"gemm_efficiency", 0.5},      {"memory_efficiency", 0.5},
                      {"kernel_overhead_s", 1e-5},   {"concurrent_kernels", 0},
                      {"attention_efficiency", 0.8}, {"attention_backward_efficiency", 0.4},
                      {"wave_quantization", 1}};
  const auto gpu = Make("device");
  // Scores of 32 heads at 8,192 tokens, head dimension 128: compute-bound, so the time scales
  // as 1 / efficiency, and within 1% of the FLOPs at the SM's rate (a partial last wave).
  OpWork scores = OpWork::Gemm({32, 8192, 8192, 128}, 2, false);
  scores.bytes_written = 0;
  const double chip = 132 * 2.0 * 4 * 512 * 1.83e9;
  const double flops = 2.0 * 32 * 8192 * 8192 * 128;
  const double plain = gpu->Estimate(scores, h100, Pass::kForward).all_cores_s - 1e-5;
  EXPECT_NEAR(plain, flops / (chip * 0.5), 0.01 * plain);
  scores.attention_kernel = true;
  const double fwd = gpu->Estimate(scores, h100, Pass::kForward).all_cores_s - 1e-5;
  const double bwd = gpu->Estimate(scores, h100, Pass::kBackward).all_cores_s - 1e-5;
  EXPECT_NEAR(fwd, plain * 0.5 / 0.8, 1e-9 * fwd);
  EXPECT_NEAR(bwd, plain * 0.5 / 0.4, 1e-9 * bwd);
  EXPECT_NEAR(gpu->Estimate(scores, h100, Pass::kRecompute).all_cores_s - 1e-5, fwd, 1e-15);
  // The online softmax over 2^24 scores: 8.5 lane cycles on 132 · 128 lanes, no kernel.
  OpWork softmax = OpWork::Vector("flash_softmax", 1 << 24, 2, 8192);
  softmax.bytes_read = softmax.bytes_written = 0;
  softmax.attention_kernel = true;
  const OpEstimate lanes = gpu->Estimate(softmax, h100, Pass::kForward);
  EXPECT_NEAR(lanes.all_cores_s, 8.5 * std::ceil((1 << 24) / (132.0 * 128)) / 1.83e9, 1e-15);
  EXPECT_EQ(lanes.kernels, 0);
  // The estimate cache tells the kernel's GEMM from a plain one of the same work.
  const CachedEstimator cached(gpu);
  OpWork again = scores;
  again.attention_kernel = false;
  EXPECT_NEAR(cached.Estimate(scores, h100, Pass::kForward).all_cores_s - 1e-5, fwd, 1e-15);
  EXPECT_NEAR(cached.Estimate(again, h100, Pass::kForward).all_cores_s - 1e-5, plain, 1e-15);
  EXPECT_EQ(cached.Misses(), 2);
}

// A multi-kernel op (OpWork::extra_kernels: Megatron-LM's FP32 cross-entropy, six kernels) is
// memory-bound on its bytes (its temporaries' passes included) and pays each kernel's overhead;
// the cache tells it from the one-kernel op of the same bytes.
TEST(DeviceModel, MultiKernelOpPaysEachKernel) {
  ArchConfig h100 = LoadArchConfig("h100-sxm-80gb");
  h100.calibration = {{"memory_efficiency", 0.5}, {"kernel_overhead_s", 1e-5},
                      {"concurrent_kernels", 0}};
  const auto gpu = Make("device");
  const std::int64_t n = 1 << 24;
  OpWork loss = OpWork::Vector("cross_entropy", n, 2, 32768);
  loss.kind = OpKind::kLoss;
  loss.bytes_read = 2 * n + 5 * 4 * n;  // the 16-bit logits, five reads of the FP32 copy
  loss.bytes_written = 4 * n + 3 * 4 * n;
  loss.extra_kernels = 5;
  const OpEstimate e = gpu->Estimate(loss, h100, Pass::kForward);
  // 38 bytes an element at half of 3.35 TB/s, above 28 lane cycles on 132 · 128 lanes.
  EXPECT_NEAR(e.all_cores_s, 38.0 * n / (0.5 * 3.35e12) + 6 * 1e-5, 1e-12);
  EXPECT_EQ(e.kernels, 6);
  const CachedEstimator cached(gpu);
  OpWork one = loss;
  one.extra_kernels = 0;
  EXPECT_NEAR(cached.Estimate(one, h100, Pass::kForward).all_cores_s, e.all_cores_s - 5e-5, 1e-12);
  EXPECT_EQ(cached.Estimate(loss, h100, Pass::kForward).kernels, 6);
  EXPECT_EQ(cached.Misses(), 2);
}

// The LM head as TorchTitan runs it (F.linear, .float(), F.cross_entropy: training.loss torch),
// measured on an H200 (share/validation/kernels/h200-sxm-141gb-gpt.csv, lm-head-fp32-ce rows:
// 16,384 tokens, hidden 2,048 over 131,072 words and 4,096 over 128,256), priced on the
// h200-sxm-141gb preset as one CUDA stream runs it: the sum of its ops' estimates.
TEST(DeviceModel, TorchLossHeadMeetsTheH200) {
  const ArchConfig h200 = LoadArchConfig("h200-sxm-141gb");
  const auto gpu = Make("device");
  for (auto [hidden, vocab, forward_ms, both_ms] :
       {std::tuple{2048, 131072, 25.49, 62.75}, {4096, 128256, 37.35, 99.71}}) {
    const std::string yaml = "name: head\nfamily: megatron-gpt\nlayers: 1\nhidden: " +
                             std::to_string(hidden) + "\nheads: 16\nffn_hidden: 8192\nvocab: " +
                             std::to_string(vocab) +
                             "\nmax_positions: 4096\nsequence_length: 4096\n"
                             "tied_embeddings: false\n";
    GraphOptions o;
    o.micro_batch = 4;
    const LayerGraph g = WithLossKernel(
        BuildLayerGraph(ParseWorkload(ConfigNode::ParseString(yaml, "head.yaml")), o),
        LossKernel::kTorch);
    double seconds[2] = {0, 0};
    for (const UniqueLayer& u : g.unique_layers) {
      if (u.name != "head") continue;
      for (int backward = 0; backward < 2; ++backward) {
        const OperatorGraph& pass = backward ? u.backward : u.forward;
        for (const Operator& op : pass.Ops()) {
          if (op.name.rfind("head.lm", 0) != 0 && op.name.rfind("head.loss", 0) != 0) continue;
          seconds[backward] +=
              gpu->Estimate(OpWork::Of(op, pass), h200,
                            backward ? Pass::kBackward : Pass::kForward).all_cores_s;
        }
      }
    }
    // Within 7% forward and 3% in all (phaze: 23.9 / 62.7 ms and 36.0 / 99.3 ms); the one-kernel
    // loss it replaced priced 15.9 / 44.9 ms on the first (−38% / −28%).
    EXPECT_NEAR(seconds[0] * 1e3, forward_ms, 0.07 * forward_ms) << hidden;
    EXPECT_NEAR((seconds[0] + seconds[1]) * 1e3, both_ms, 0.03 * both_ms) << hidden;
  }
}

// The attention dropout inside the fused kernel, measured on an H200 (cuDNN's causal kernel, 32
// heads × 4,096 tokens × 128, h200-sxm-141gb-gpt.csv against h200-sxm-141gb-attention.csv):
// dropout 0.1 adds 0.270 ms to the forward (1 kept score in 0.9 of the tiles' scores: the forward
// draws the random numbers) and 0.121 ms to the backward (which draws them again for the scores
// it recomputes). Each pass's kernel ops (the core's and its re-run: `flash:`) summed, with and
// without dropout; within 10%.
TEST(DeviceModel, FusedAttentionDropoutMeetsTheH200) {
  const ArchConfig h200 = LoadArchConfig("h200-sxm-141gb");
  const auto gpu = Make("device");
  double seconds[2][2] = {{0, 0}, {0, 0}};  // [dropout][backward]
  for (int dropout = 0; dropout < 2; ++dropout) {
    const std::string yaml =
        "name: attention\nfamily: megatron-gpt\nlayers: 1\nhidden: 4096\nheads: 32\n"
        "vocab: 256\nmax_positions: 4096\nsequence_length: 4096\ncausal: true\ndropout: " +
        std::string(dropout ? "0.1" : "0") + "\n";
    const LayerGraph g = WithAttentionKernel(
        BuildLayerGraph(ParseWorkload(ConfigNode::ParseString(yaml, "a.yaml")), GraphOptions{}),
        AttentionKernel::kFused);
    for (const UniqueLayer& u : g.unique_layers) {
      if (u.name != "block") continue;
      for (int backward = 0; backward < 2; ++backward) {
        const OperatorGraph& pass = backward ? u.backward : u.forward;
        for (const Operator& op : pass.Ops()) {
          if (!op.attention_kernel) continue;
          seconds[dropout][backward] +=
              gpu->Estimate(OpWork::Of(op, pass), h200, backward ? Pass::kBackward : Pass::kForward)
                  .all_cores_s;
        }
      }
    }
  }
  ASSERT_GT(seconds[0][1], 0);
  EXPECT_NEAR((seconds[1][0] - seconds[0][0]) * 1e3, 0.270, 0.1 * 0.270);
  // phaze 0.117 ms; 0.028 when the re-run was priced as the plain mask.
  EXPECT_NEAR((seconds[1][1] - seconds[0][1]) * 1e3, 0.121, 0.1 * 0.121);
}

// The estimate cache tells an FP8 GEMM from the 16-bit GEMM of the same shape and bytes, and
// one cast count from another; the same architecture met as another object hits.
TEST(DeviceModel, CacheKeysOnPrecision) {
  const ArchConfig h100 = LoadArchConfig("h100-sxm-80gb");
  const auto gpu = Make("device");
  const CachedEstimator cached(gpu);
  OpWork bf16 = OpWork::Gemm({1, 8192, 8192, 8192}, 2);
  OpWork fp8 = bf16;
  fp8.fp8 = true;
  OpWork cast = fp8;
  cast.fp8_cast_elements = 1 << 20;
  for (const OpWork* op : {&bf16, &fp8, &cast, &bf16, &fp8, &cast}) {
    EXPECT_EQ(cached.Estimate(*op, h100, Pass::kForward).all_cores_s,
              gpu->Estimate(*op, h100, Pass::kForward).all_cores_s);
  }
  const ArchConfig copy = h100;
  EXPECT_EQ(cached.Estimate(cast, copy, Pass::kForward).all_cores_s,
            gpu->Estimate(cast, h100, Pass::kForward).all_cores_s);
  EXPECT_EQ(cached.Misses(), 3);
  EXPECT_EQ(cached.Hits(), 4);
}

TEST(DeviceModel, TilesAreArrayBlocksThatFitTheCoreBuffers) {
  // 4 MiB per MXU holds every tile's double-buffered operand slices: 2·(8·128 + 4·128)·128·2
  // bytes = 768 KiB for the largest.
  std::vector<std::pair<std::int64_t, std::int64_t>> got;
  for (const GemmTile& t : DeviceModel::Tiles(TpuLike(4 << 20), 4)) got.push_back({t.tm, t.tn});
  const std::vector<std::pair<std::int64_t, std::int64_t>> all = {
      {512, 512}, {512, 1024}, {1024, 512}, {1024, 1024}, {1024, 2048}, {2048, 1024}};
  EXPECT_EQ(got, all);
  // The template's 16 bytes per PE (256 KiB) holds only the 2 × 2 blocks: 2·(256 + 256)·128·2 =
  // 256 KiB; 2 × 4 needs 384 KiB.
  got.clear();
  for (const GemmTile& t : DeviceModel::Tiles(TpuLike(256 << 10), 4)) got.push_back({t.tm, t.tn});
  EXPECT_EQ(got, (std::vector<std::pair<std::int64_t, std::int64_t>>{{512, 512}}));
  // One tensor core: a 1 × 1 grid.
  got.clear();
  for (const GemmTile& t : DeviceModel::Tiles(TpuLike(256 << 10), 1)) got.push_back({t.tm, t.tn});
  EXPECT_EQ(got, (std::vector<std::pair<std::int64_t, std::int64_t>>{{256, 256}}));
}

TEST(DeviceModel, ReductionFillsWholeArrayRowsAndTilesFillWaves) {
  ArchConfig tpu = TpuLike(256 << 10);
  tpu.hbm_bandwidth_bytes_per_s = 1e18;  // no HBM floor here
  const auto device = Make("device");
  // 1024 × 1024 output in 512² tiles: 4 tiles on 2 groups = 2 waves. k = 64 fills half of the
  // 128 array rows, so it costs what k = 128 does: 2 · 512² · 128 / (2 · 4 · 128² · 1.05 GHz).
  // The GLB: (512 + 512) · 2 bytes · 64 per tile at half of 4096 · 2 · 1.05e9 B/s is less.
  const double group = 2.0 * 4 * 128 * 128 * 1.05e9;
  const double tile = 2.0 * 512 * 512 * 128 / group;
  EXPECT_GT(tile, 1024.0 * 2 * 64 / (4096.0 * 2 * 1.05e9 / 2));
  const OpEstimate k64 =
      device->Estimate(OpWork::Gemm({1, 1024, 1024, 64}, 2), tpu, Pass::kForward);
  EXPECT_DOUBLE_EQ(k64.all_cores_s, 2 * tile);
  EXPECT_DOUBLE_EQ(
      device->Estimate(OpWork::Gemm({1, 1024, 1024, 128}, 2), tpu, Pass::kForward).all_cores_s,
      2 * tile);
  // One more row needs a third row of tiles: 6 tiles, 3 waves.
  EXPECT_DOUBLE_EQ(
      device->Estimate(OpWork::Gemm({1, 1025, 1024, 128}, 2), tpu, Pass::kForward).all_cores_s,
      3 * tile);
  // Not concurrent: "one core" is a group, never chosen (× 2 groups).
  EXPECT_DOUBLE_EQ(k64.single_core_s, 2 * k64.all_cores_s);
}

TEST(DeviceModel, OneTensorCoreOfATemplateChip) {
  // The paper's template: ops may share the cores (concurrent_kernels 1), so one tensor core is
  // costed on its own: its 1 × 1 tile grid, all the tiles in sequence, its 1/8 of the GLB and HBM.
  ArchConfig a = TpuLike(256 << 10);
  a.calibration["concurrent_kernels"] = 1;
  a.hbm_bandwidth_bytes_per_s = 1e18;  // no HBM floor for the GEMM
  const auto device = Make("device");
  // 1024² output in 256² tiles: 16 tiles on one MXU of 128² at 1.05 GHz, k = 128; the GLB share
  // 4096 · 2 · 1.05e9 / 8 B/s carries (256 + 256) · 2 · 128 bytes per tile in less time.
  const double mxu = 2.0 * 128 * 128 * 1.05e9;
  const double tile = 2.0 * 256 * 256 * 128 / mxu;
  EXPECT_GT(tile, 512.0 * 2 * 128 / (4096.0 * 2 * 1.05e9 / 8));
  const OpEstimate e = device->Estimate(OpWork::Gemm({1, 1024, 1024, 128}, 2), a, Pass::kForward);
  EXPECT_DOUBLE_EQ(e.single_core_s, 16 * tile);
  EXPECT_DOUBLE_EQ(e.all_cores_s, 2 * 2.0 * 512 * 512 * 128 / (4 * mxu));
  a.hbm_bandwidth_bytes_per_s = 1.2e12;
  // A vector op on one vector core: its 1/2 of the HBM (1 MiB read and written at 0.6 TB/s) or
  // its 1024 lanes (GELU: 16 cycles per element), whichever is longer.
  const OpEstimate v = device->Estimate(OpWork::Vector("gelu", 1 << 19, 2), a, Pass::kForward);
  EXPECT_DOUBLE_EQ(v.single_core_s, std::max(2.0 * (1 << 20) / 0.6e12, 16.0 * 512 / 1.05e9));
  EXPECT_DOUBLE_EQ(v.all_cores_s, std::max(2.0 * (1 << 20) / 1.2e12, 16.0 * 256 / 1.05e9));
}

TEST(DeviceModel, GlbCapacityAndLaneBoundVectorOps) {
  ArchConfig a = TpuLike(256 << 10);
  a.glb_bytes = 2 << 20;  // 1 Mi words: √S = 1024
  // 4096 × 4096 × 4096 does not fit: the blocked GEMM reads 2·m·n·k/√S words and writes m·n.
  const double compulsory = 2.0 * 3 * 4096 * 4096;
  const double blocked = (2.0 * 4096 * 4096 * 4096 / 1024 + 4096.0 * 4096) * 2;
  EXPECT_DOUBLE_EQ(DeviceModel::GemmHbmBytes({1, 4096, 4096, 4096}, a, compulsory), blocked);
  // 256³ fits (3 · 64 Ki words): the operands and the result once.
  EXPECT_DOUBLE_EQ(DeviceModel::GemmHbmBytes({1, 256, 256, 256}, a, 6.0 * 65536), 6.0 * 65536);
  // Two lanes: a softmax over 1 Mi elements is bound by its 26 cycles per element per lane.
  a.num_vc = 1;
  a.pe_vc = 2;
  const OpEstimate e =
      Make("device")->Estimate(OpWork::Vector("softmax", 1 << 20, 2), a, Pass::kForward);
  EXPECT_DOUBLE_EQ(e.all_cores_s, 26.0 * (1 << 19) / 1.05e9);
  // A function without a cycle cost is an error that names it, unless params give one.
  OpWork odd = OpWork::Vector("hyperbolic_frobnicate", 64, 2);
  odd.name = "mlp.odd";
  EXPECT_THROW(Make("device")->Estimate(odd, a, Pass::kForward), UnsupportedOpError);
  EXPECT_GT(Make("device", "vector_cycles: {hyperbolic_frobnicate: 3}")
                ->Estimate(odd, a, Pass::kForward)
                .all_cores_s,
            0);
}

TEST(DeviceModel, TemplateChipsShareTheA100Technology) {
  // A generated chip carries no calibration: it gets the A100's fitted values (the preset's own).
  const ArchConfig a100 = LoadArchConfig("a100-sxm-80gb");
  const DeviceTechnology chip = DeviceTechnologyFor(LoadArchConfig("tpuv4"));
  for (const char* key : {"gemm_efficiency", "memory_efficiency", "kernel_overhead_s"}) {
    EXPECT_DOUBLE_EQ(chip.Get(key), a100.calibration.at(key)) << key;
  }
  EXPECT_EQ(chip.concurrent_kernels, 1);
  EXPECT_EQ(DeviceTechnologyFor(a100).concurrent_kernels, 0);
  ArchConfig bad = a100;
  bad.calibration["memory_efficiency"] = 0;
  EXPECT_THROW(DeviceTechnologyFor(bad), UnsupportedOpError);
}

}  // namespace
}  // namespace phaze
