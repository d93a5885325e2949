#include "phaze/schedule/precedence.hpp"

#include <algorithm>
#include <queue>

#include "phaze/core/error.hpp"

namespace phaze {

Precedence::Precedence(const ScheduleProblem& problem)
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

}  // namespace phaze
