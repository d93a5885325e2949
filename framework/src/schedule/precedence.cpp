#include "phaze/schedule/precedence.hpp"

#include <algorithm>
#include <queue>

#include "phaze/core/error.hpp"

namespace phaze {

Precedence::Precedence(const ScheduleProblem& problem, Closure closure)
    : n_(static_cast<int>(problem.ops.size())), words_((problem.ops.size() + 63) / 64) {
  predecessors_.assign(n_, {});
  successors_.assign(n_, {});
  for (const auto& [from, to] : problem.edges) {
    if (from < 0 || to < 0 || from >= n_ || to >= n_ || from == to) {
      throw InvalidArgumentError("schedule problem '" + problem.name + "': edge (" +
                                 std::to_string(from) + ", " + std::to_string(to) +
                                 ") is a self loop or names no op");
    }
    successors_[from].push_back(to);
    predecessors_[to].push_back(from);
  }
  for (int i = 0; i < n_; ++i) {
    for (auto* list : {&predecessors_[i], &successors_[i]}) {
      std::sort(list->begin(), list->end());
      list->erase(std::unique(list->begin(), list->end()), list->end());
    }
  }
  std::vector<int> indegree(n_);
  std::priority_queue<int, std::vector<int>, std::greater<>> ready;
  for (int i = 0; i < n_; ++i) {
    indegree[i] = static_cast<int>(predecessors_[i].size());
    if (indegree[i] == 0) ready.push(i);
  }
  while (!ready.empty()) {
    const int i = ready.top();
    ready.pop();
    order_.push_back(i);
    for (int j : successors_[i]) {
      if (--indegree[j] == 0) ready.push(j);
    }
  }
  if (static_cast<int>(order_.size()) != n_) {
    const int at = problem.OpOnCycle().value_or(0);
    throw InvalidArgumentError("schedule problem '" + problem.name +
                               "': the edges form a cycle through op '" +
                               problem.ops[static_cast<std::size_t>(at)].name + "'");
  }
  if (closure == Closure::kNone) return;
  // Closure in reverse topological order: descendants(i) = ∪ over successors s of {s} ∪ desc(s).
  bits_.assign(static_cast<std::size_t>(n_) * words_, 0);
  for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
    const int i = *it;
    for (int s : successors_[i]) {
      bits_[Word(i, s)] |= std::uint64_t{1} << (s & 63);
      for (std::size_t w = 0; w < words_; ++w) bits_[i * words_ + w] |= bits_[s * words_ + w];
    }
  }
}

std::vector<int> Precedence::ArticulationOps() const {
  // With P the ops before i in the topological order and S those after, i is comparable to every
  // other op iff every op of P reaches i and i reaches every op of S (P must be its ancestors, S
  // its descendants). An op u of P reaches i iff it has a successor at position ≤ pos(i): follow
  // the earliest successor each time and the path stays in P ∪ {i}, moving forward, so it ends at
  // i; conversely a path from u to i runs through P. Likewise v of S is reached iff it has a
  // predecessor at position ≥ pos(i). So: prefix max of each op's earliest successor ≤ pos(i), and
  // suffix min of each op's latest predecessor ≥ pos(i).
  std::vector<int> position(static_cast<std::size_t>(n_));
  for (int k = 0; k < n_; ++k) position[static_cast<std::size_t>(order_[k])] = k;
  // latest[k]: min over positions > k of the op's latest predecessor (n_ when there is none).
  std::vector<int> latest(static_cast<std::size_t>(n_) + 1, n_);
  for (int k = n_ - 1; k >= 0; --k) {
    int last = -1;  // a source: reached by nothing
    for (int q : predecessors_[order_[k]]) last = std::max(last, position[static_cast<std::size_t>(q)]);
    latest[static_cast<std::size_t>(k)] = std::min(latest[static_cast<std::size_t>(k) + 1], last);
  }
  std::vector<int> out;
  int earliest = -1;  // max over positions < k of the op's earliest successor
  for (int k = 0; k < n_; ++k) {
    const int i = order_[k];
    if (earliest <= k && latest[static_cast<std::size_t>(k) + 1] >= k) out.push_back(i);
    int first = n_;  // a sink: reaches nothing
    for (int s : successors_[i]) first = std::min(first, position[static_cast<std::size_t>(s)]);
    earliest = std::max(earliest, first);
  }
  return out;
}

}  // namespace phaze
