// The network model (DESIGN §10): how long collectives and pipeline sends take on a cluster whose
// devices are grouped in levels (a node of 8 GPUs on NVLink, then an InfiniBand fabric). It is the
// one owner of communication time; estimators cost compute only.
//
// Levels are listed innermost first. Level l joins `size_l` devices (cumulative: a node of 8, a pod
// of 256, …); the outermost level joins everything and has no size. Bandwidth is per device and per
// direction, latency per message step. A flat network (the paper's) is one level.
//
// Rank layout (Megatron-LM): tensor-parallel ranks innermost, then data-parallel, then pipeline.
// A group is {size n, stride r}: members r apart (tensor parallel r = 1, data parallel r = t,
// pipeline r = t·d, the tied embedding's first and last stage r = t·d·(p−1)). Members of the group
// inside one level-l group, counted for the group that starts at rank 0 (ranks 0, r, 2r, … below
// size_l): m_l = clamp(⌊(size_l − 1) / r⌋ + 1, 1, n) (m_outermost = n), which is size_l / r when r
// divides size_l; {0, 6} on a node of 8 is inside the node. The group's fan-out at level l is
// n_l = m_l / m_{l−1} (m_{−1} = 1), so Π n_l = n. Levels with n_l = 1 are not crossed. (Groups
// that start elsewhere may straddle differently; a fractional n_l approximates uneven layouts.)
//
// Within one level (bandwidth β, latency α, n members), ring algorithms on `bytes` B:
//   all-reduce      2(n−1)/n·B/β + 2(n−1)·α
//   all-gather      (n−1)/n·B/β + (n−1)·α     (B = the gathered output)
//   reduce-scatter  (n−1)/n·B/β + (n−1)·α     (B = the input)
//   all-to-all      (n−1)/n·B/β + (n−1)·α     (B = what each device holds before)
// Across levels, hierarchically (the inner level first; L = the crossed levels, innermost first):
//   AR(B, L)  = RS_0(B) + AR(B/n_0, L \ 0) + AG_0(B)
//   RS(B, L)  = RS_0(B) + RS(B/n_0, L \ 0)
//   AG(B, L)  = AG(B/n_0, L \ 0) + AG_0(B)
//   A2A(B, L) = Σ_l  (Π_{i<l} n_i)·(n_l − 1)·(B/n)/β_l + (n_l − 1)·α_l  (each device sends B/n to
//               every other member, over the innermost level that joins the two)
// The n_0 members of one inner group work on disjoint 1/n_0 parts across the outer level at the
// same time, each on its own per-device outer bandwidth. With one level these are the ring
// formulas; for n = 1 every collective is free.
// A collective call also pays, once, the largest `call_latency_s` γ_l of the levels it crosses: a
// call's fixed cost (NCCL's kernel launch, channel and proxy set-up, the final synchronisation),
// which does not grow with the ring's steps. NCCL's own tuning model has the same two terms (a base
// latency per algorithm and protocol, and a hardware latency per step); nccl-tests' all-reduce on
// one A100 node meets γ + 2(n−1)·α + 2(n−1)/n·B/β within 5% from 2 to 8 GPUs and 1 MiB to 1 GiB
// (share/validation/collectives/), where α alone (γ = 0) misses 2 GPUs by 18%. γ = 0 by default.
// A send of B bytes over level l (pipeline stages): B/β_l + α_l.
// Energy (CollectiveJ, SendJ): the same formulas with 1/β_l replaced by the level's joules per
// byte and α_l by 0: what one device sends, priced per level.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "phaze/core/collective_kind.hpp"
#include "phaze/core/config_node.hpp"
#include "phaze/core/json.hpp"

namespace phaze {

struct NetworkLevel {
  std::string name;
  std::int64_t size = 0;  // devices joined by one group at this level; 0 for the outermost
  double bandwidth_bytes_per_s = 0;
  double latency_s = 0;  // α: per message step of a ring, and per send
  // Joules per bit a device sends over this level, NICs and switches included (DESIGN §11);
  // the default is a board-level electrical SerDes link's (share/energy/README.md).
  double energy_pj_per_bit = kDefaultLinkPjPerBit;
  static constexpr double kDefaultLinkPjPerBit = 5.0;
  // γ: once per collective call that crosses this level (the largest of the crossed levels').
  double call_latency_s = 0;
};

// A communication group: `size` members `stride` ranks apart.
struct CommGroup {
  std::int64_t size = 1;
  std::int64_t stride = 1;
};

class Network {
 public:
  // The paper's flat network: one level.
  static Network Flat(double bandwidth_bytes_per_s, double latency_s = 0);
  // Parses a `levels:` list (innermost first) with located errors.
  static Network ParseLevels(const ConfigNode& levels);
  // A system file (share/systems/NAME.yaml or a path): {name, description, levels: […]}.
  static Network LoadSystem(const std::string& name_or_path);

  Network() = default;
  explicit Network(std::vector<NetworkLevel> levels, std::string name = "");

  const std::vector<NetworkLevel>& Levels() const { return levels_; }
  const std::string& Name() const { return name_; }
  bool IsFlat() const { return levels_.size() == 1; }
  // Empty when valid, else what is wrong (which level, which key).
  std::string Validate() const;

  // Seconds for one collective of `bytes` per device over `group`.
  double CollectiveS(CollectiveKind kind, double bytes, CommGroup group) const;
  // Seconds to send `bytes` between two devices joined first at `level`.
  double SendS(double bytes, int level) const;
  // Joules one device spends on its part of the collective (the bytes it sends at each level,
  // by the same ring algorithms, at that level's energy_pj_per_bit), and on a send.
  double CollectiveJ(CollectiveKind kind, double bytes, CommGroup group) const;
  double SendJ(double bytes, int level) const;
  // The innermost level one group of which holds `ranks` consecutive ranks (the outermost if none).
  int LevelHolding(std::int64_t ranks) const;
  // The group's fan-out n_l at every level (see the header comment).
  std::vector<double> FanOut(CommGroup group) const;

  Json ToJson() const;

 private:
  void FanOutInto(CommGroup group, std::span<double> fan) const;  // fan: one per level
  template <class PriceOf>
  double Priced(CollectiveKind kind, double bytes, CommGroup group, const PriceOf& price) const;

  std::vector<NetworkLevel> levels_;
  std::string name_;
};

}  // namespace phaze
