// The precedence relation of a schedule problem: the transitive closure i ≺ j of its edges as a
// bit matrix (n ≤ a few hundred ops per layer, so n² bits are nothing; a whole graph of 100k ops
// asks for Closure::kNone and uses the linear queries only), direct predecessors and successors
// (deduplicated), and a deterministic topological order.
#pragma once

#include <cstdint>
#include <vector>

#include "phaze/schedule/schedule_problem.hpp"

namespace phaze {

class Precedence {
 public:
  enum class Closure { kBuild, kNone };  // kNone: Before/Comparable are unavailable
  // Throws InvalidArgumentError naming an op on a cycle.
  explicit Precedence(const ScheduleProblem& problem, Closure closure = Closure::kBuild);

  int Size() const { return n_; }
  bool Before(int i, int j) const { return (bits_[Word(i, j)] >> (j & 63)) & 1u; }  // i ≺ j
  bool Comparable(int i, int j) const { return i == j || Before(i, j) || Before(j, i); }
  const std::vector<int>& Order() const { return order_; }  // topological, smallest index first
  const std::vector<std::vector<int>>& Predecessors() const { return predecessors_; }
  const std::vector<std::vector<int>>& Successors() const { return successors_; }
  // The ops comparable to every other op (each precedes or follows all the rest), in topological
  // order: where a schedule can be cut into independent segments. Linear in ops and edges, with
  // or without the closure.
  std::vector<int> ArticulationOps() const;

 private:
  std::size_t Word(int i, int j) const { return static_cast<std::size_t>(i) * words_ + (j >> 6); }

  int n_ = 0;
  std::size_t words_ = 0;
  std::vector<std::uint64_t> bits_;
  std::vector<int> order_;
  std::vector<std::vector<int>> predecessors_, successors_;
};

}  // namespace phaze
