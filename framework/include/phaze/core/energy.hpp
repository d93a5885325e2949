// Energy by part (DESIGN §11): what an op, a pass, a layer or a training step spends, split so a
// report can say where the joules go. Dynamic parts come from the energy model
// (phaze/estimate/energy_model.hpp: compute, on-chip buffers, HBM) and the network model (link
// bytes, phaze/network/network.hpp); the static part is power × time (the placement's step).
#pragma once

namespace phaze {

struct Energy {
  double compute_j = 0;  // MACs of the tensor cores and operations of the vector lanes
  double on_chip_j = 0;  // accesses of the per-core buffers and the GLB/L2
  double memory_j = 0;   // HBM traffic
  double network_j = 0;  // bytes over the cluster's links (collectives, pipeline sends)
  double static_j = 0;   // leakage and idle power over the time

  double DynamicJ() const { return compute_j + on_chip_j + memory_j + network_j; }
  double TotalJ() const { return DynamicJ() + static_j; }
  Energy& operator+=(const Energy& o) {
    compute_j += o.compute_j;
    on_chip_j += o.on_chip_j;
    memory_j += o.memory_j;
    network_j += o.network_j;
    static_j += o.static_j;
    return *this;
  }
  Energy operator*(double k) const {
    return {compute_j * k, on_chip_j * k, memory_j * k, network_j * k, static_j * k};
  }
  Energy operator+(const Energy& o) const {
    Energy e = *this;
    e += o;
    return e;
  }
};

}  // namespace phaze
