#include "phaze/search/pipeline_split.hpp"

#include <numeric>
#include <utility>

namespace phaze {

int PipelineSplit::Blocks() const { return std::accumulate(blocks.begin(), blocks.end(), 0); }

bool PipelineSplit::Even() const {
  for (int b : blocks) {
    if (b != blocks.front()) return false;
  }
  return !blocks.empty();
}

std::string PipelineSplit::Text() const {
  std::string out;
  for (std::size_t s = 0; s < blocks.size();) {
    std::size_t run = 1;
    while (s + run < blocks.size() && blocks[s + run] == blocks[s]) ++run;
    out += (out.empty() ? "" : ", ") + std::to_string(blocks[s]) +
           (run > 1 ? " × " + std::to_string(run) : "");
    s += run;
  }
  return out;
}

PipelineSplit PipelineSplit::Default(int blocks, int chunks) {
  PipelineSplit split;
  for (int s = 0; s < chunks; ++s) split.blocks.push_back(blocks / chunks + (s < blocks % chunks));
  return split;
}

PipelineSplit PlanPipelineSplit(const LayerGraph& graph, const PlanRequest& plan) {
  PipelineSplit split;
  const int n = static_cast<int>(graph.layers.size());
  auto kind = [&](int i) { return graph.unique_layers.at(graph.layers[i].unique_id).kind; };
  bool shaped = n >= 2 && kind(0) == LayerKind::kEmbedding && kind(n - 1) == LayerKind::kHead;
  for (int i = 1; shaped && i + 1 < n; ++i) shaped = kind(i) == LayerKind::kBlock;
  if (!shaped) {
    split.why = "the layers of " + graph.model +
                " are not an embedding, transformer blocks and a head, as Megatron-LM's and "
                "TorchTitan's pipeline splits take them";
    return split;
  }
  const int p = plan.pipeline_stages, v = plan.virtual_stages;
  std::vector<int> starts = plan.stage_starts;
  if (starts.empty()) {
    std::string why;
    starts = MegatronStageStarts(graph, p, &why);
    if (starts.size() + 1 != static_cast<std::size_t>(p)) {
      split.why = why;
      return split;
    }
  }
  // Each device's blocks: its layers less the embedding (device 0) and the head (device p − 1).
  std::vector<int> device(static_cast<std::size_t>(p));
  for (int k = 0; k < p; ++k) {
    const int first = k == 0 ? 1 : starts[static_cast<std::size_t>(k - 1)];
    const int end = k + 1 == p ? n - 1 : starts[static_cast<std::size_t>(k)];
    device[static_cast<std::size_t>(k)] = std::max(0, end - first);
  }
  split.blocks.assign(static_cast<std::size_t>(p * v), 0);
  for (int k = 0; k < p; ++k) {
    const int b = device[static_cast<std::size_t>(k)];
    for (int c = 0; c < v; ++c) {
      // The extra blocks on the later chunks of the first device, the earlier ones elsewhere.
      const int extra_at = k == 0 ? c - (v - b % v) : c;
      split.blocks[static_cast<std::size_t>(c * p + k)] =
          b / v + (extra_at >= 0 && extra_at < b % v ? 1 : 0);
    }
  }
  return split;
}

std::string MegatronLayout(const PipelineSplit& split) {
  const std::size_t n = split.blocks.size();
  std::vector<std::string> chunks;
  for (std::size_t s = 0; s < n; ++s) {
    const int b = split.blocks[s];
    chunks.push_back(std::string(s == 0 ? "E" : "") +
                     (b == 0   ? ""
                      : b == 1 ? "t"
                               : "t*" + std::to_string(b)) +
                     (s + 1 == n ? "L" : ""));
  }
  std::string out;
  for (std::size_t s = 0; s < n;) {
    std::size_t run = 1;
    while (s + run < n && chunks[s + run] == chunks[s]) ++run;
    // A run reaching the last chunk leaves that one out of "(…|)*n": no '|' after the last.
    const std::size_t repeated = s + run == n ? run - 1 : run;
    if (repeated >= 2) {
      out += "(" + chunks[s] + "|)*" + std::to_string(repeated) + ",";
      s += repeated;
    } else {
      out += chunks[s] + (s + 1 == n ? "" : "|");
      ++s;
    }
  }
  return out;
}

bool TorchTitanLessLayers(const PipelineSplit& split, int virtual_stages, int* first_less,
                          int* last_less, int* layers_per_stage) {
  const int n = static_cast<int>(split.blocks.size());
  const int blocks = split.Blocks();
  if (n == 0) return false;
  // (0, 0) and TorchTitan's defaults (1, 1) first, then every other pair.
  std::vector<std::pair<int, int>> pairs = {{0, 0}, {1, 1}};
  for (int a = 0; a <= blocks; ++a) {
    for (int b = 0; b <= blocks; ++b) {
      if (a + b > 0 && !(a == 1 && b == 1)) pairs.emplace_back(a, b);
    }
  }
  for (const auto& [a, b] : pairs) {
    const int effective = blocks + a + b;
    const int per = effective / n;
    // generate_llm_fqn_per_model_part refuses a first or last stage less than empty.
    if (per == 0 || a > per || b > per) continue;
    bool same = true;
    for (int s = 0; same && s < n; ++s) {
      const int count = per + (s < effective % n ? 1 : 0) - (s == 0 ? a : 0) - (s + 1 == n ? b : 0);
      same = count == split.blocks[static_cast<std::size_t>(s)];
    }
    if (!same) continue;
    // A looped schedule counts its stages as ⌈effective / layers_per_stage⌉, or without it two a
    // device.
    int lps = 0;
    for (int l = per; virtual_stages > 1 && l <= effective && lps == 0; ++l) {
      if ((effective + l - 1) / l == n) lps = l;
    }
    if (virtual_stages > 2 && lps == 0) continue;
    *first_less = a;
    *last_less = b;
    *layers_per_stage = lps;
    return true;
  }
  return false;
}

}  // namespace phaze
