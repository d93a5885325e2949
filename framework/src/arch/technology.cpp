#include "phaze/arch/technology.hpp"

#include <cmath>
#include <iterator>

#include "phaze/core/error.hpp"

namespace phaze {

const char* const DeviceTechnology::kKeys[9] = {"gemm_efficiency",
                                                "memory_efficiency",
                                                "kernel_overhead_s",
                                                "concurrent_kernels",
                                                "wave_quantization",
                                                "attention_efficiency",
                                                "attention_backward_efficiency",
                                                "fp8_exact_accumulation",
                                                "unaligned_gemm_efficiency"};

namespace {

// The members behind DeviceTechnology::kKeys, in the same order.
double DeviceTechnology::*const kDeviceMembers[9] = {
    &DeviceTechnology::gemm_efficiency,
    &DeviceTechnology::memory_efficiency,
    &DeviceTechnology::kernel_overhead_s,
    &DeviceTechnology::concurrent_kernels,
    &DeviceTechnology::wave_quantization,
    &DeviceTechnology::attention_efficiency,
    &DeviceTechnology::attention_backward_efficiency,
    &DeviceTechnology::fp8_exact_accumulation,
    &DeviceTechnology::unaligned_gemm_efficiency};

double DeviceTechnology::*DeviceMember(const std::string& key) {
  for (std::size_t i = 0; i < std::size(kDeviceMembers); ++i) {
    if (key == DeviceTechnology::kKeys[i]) return kDeviceMembers[i];
  }
  throw Error("device model: no technology parameter '" + key + "'");
}

}  // namespace

double DeviceTechnology::Get(const std::string& key) const { return this->*DeviceMember(key); }

void DeviceTechnology::Set(const std::string& key, double value) { this->*DeviceMember(key) = value; }

std::string DeviceTechnology::Check(const std::string& key, double value) {
  if (key == kKeys[0] || key == kKeys[1] || key == kKeys[5] || key == kKeys[6] || key == kKeys[7] ||
      key == kKeys[8]) {
    return value > 0 && value <= 1 ? "" : "expected a fraction in (0, 1]";
  }
  if (key == kKeys[2]) {
    return value >= 0 && std::isfinite(value) ? "" : "expected finite seconds, at least 0";
  }
  if (key == kKeys[3]) return value == 0 || value == 1 ? "" : "expected 0 or 1";
  if (key == kKeys[4]) return value >= 0 && value <= 1 ? "" : "expected a fraction in [0, 1]";
  std::string known;
  for (const char* k : kKeys) known += (known.empty() ? "" : ", ") + std::string(k);
  return "no technology parameter '" + key + "' in the device model; known: " + known;
}

namespace {

double EnergyTechnology::*const kEnergyMembers[7] = {&EnergyTechnology::mac_pj,
                                                     &EnergyTechnology::lane_op_pj,
                                                     &EnergyTechnology::sram_pj_per_byte_1mib,
                                                     &EnergyTechnology::hbm_pj_per_bit,
                                                     &EnergyTechnology::static_w_per_mm2,
                                                     &EnergyTechnology::idle_w,
                                                     &EnergyTechnology::voltage_floor_clock};

double EnergyTechnology::*EnergyMember(const std::string& key) {
  for (int i = 0; i < 7; ++i) {
    if (key == EnergyTechnology::kKeys[i]) return kEnergyMembers[i];
  }
  throw Error("energy model: no technology parameter '" + key + "'");
}

}  // namespace

const char* const EnergyTechnology::kKeys[7] = {
    "mac_pj",           "lane_op_pj", "sram_pj_per_byte_1mib", "hbm_pj_per_bit",
    "static_w_per_mm2", "idle_w",     "voltage_floor_clock"};

double EnergyTechnology::Get(const std::string& key) const { return this->*EnergyMember(key); }
void EnergyTechnology::Set(const std::string& key, double value) { this->*EnergyMember(key) = value; }

std::string EnergyTechnology::Check(const std::string& key, double value) {
  if (key == "voltage_floor_clock") {
    return value >= 0 && value <= 1 ? "" : "expected a fraction of the TDP's clock in [0, 1]";
  }
  for (const char* k : kKeys) {
    if (key == k) {
      return std::isfinite(value) && value >= 0 && value <= 1e6
                 ? ""
                 : "expected a finite number in [0, 1e6] (pJ, W or W/mm²)";
    }
  }
  std::string known;
  for (const char* k : kKeys) known += (known.empty() ? "" : ", ") + std::string(k);
  return "no parameter '" + key + "' in the energy model; known: " + known;
}

}  // namespace phaze
