#include "phaze/search/evaluation_codec.hpp"

#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "phaze/core/byte_stream.hpp"
#include "phaze/core/error.hpp"
#include "phaze/graph/layer_graph.hpp"

namespace phaze {
namespace {

// One field list per type, in declaration order: `Fields(x, io)` hands every field of x to io,
// which writes it (Writer) or reads it back (Reader). A new field is added in one place, and both
// directions follow. `Self` is T or const T.

template <class Self, class F>
void Fields(Self& m, F&& io) requires std::is_same_v<std::remove_const_t<Self>, StageMemory> {
  io(m.weight_bytes), io(m.gradient_bytes), io(m.optimizer_state_bytes), io(m.activation_bytes);
  io(m.working_bytes), io(m.gathered_bytes), io(m.in_flight), io(m.step_working_bytes);
  io(m.peak_at_step);
}

template <class Self, class F>
void Fields(Self& e, F&& io) requires std::is_same_v<std::remove_const_t<Self>, Energy> {
  io(e.compute_j), io(e.on_chip_j), io(e.memory_j), io(e.network_j), io(e.static_j);
}

template <class Self, class F>
void Fields(Self& b, F&& io) requires std::is_same_v<std::remove_const_t<Self>, StepBreakdown> {
  io(b.forward_s), io(b.backward_s), io(b.recompute_s), io(b.pipeline_send_s), io(b.sharding_s);
  io(b.bubble_s);
  io(b.data_parallel_s), io(b.data_parallel_total_s), io(b.optimizer_s), io(b.tied_embedding_s),
      io(b.bottleneck_stage);
  io(b.pipeline_level);
}

template <class Self, class F>
void Fields(Self& s, F&& io) requires std::is_same_v<std::remove_const_t<Self>, StagePlan> {
  io(s.first_layer), io(s.last_layer), io(s.devices), io(s.load_s), io(s.forward_s);
  io(s.backward_s), io(s.recompute_s), io(s.sharding_s), io(s.peak_memory_bytes), io(s.memory);
}

template <class Self, class F>
void Fields(Self& p, F&& io) requires std::is_same_v<std::remove_const_t<Self>, PlacementPlan> {
  io(p.feasible), io(p.reason), io(p.time_per_batch_s), io(p.throughput_samples_per_s);
  io(p.tensor_parallel), io(p.data_parallel), io(p.pipeline_stages), io(p.virtual_stages);
  io(p.micro_batches), io(p.stages), io(p.max_stage_load_s), io(p.bubble_share);
  io(p.sync_share), io(p.breakdown), io(p.energy), io(p.devices);
}

template <class Self, class F>
void Fields(Self& s, F&& io) requires std::is_same_v<std::remove_const_t<Self>, PlanChoice::Stage> {
  io(s.first_layer), io(s.last_layer), io(s.layers), io(s.devices), io(s.load_s);
  io(s.peak_memory_bytes);
}

template <class Self, class F>
void Fields(Self& c, F&& io) requires std::is_same_v<std::remove_const_t<Self>, PlanChoice> {
  io(c.feasible), io(c.reason), io(c.plan), io(c.strategy), io(c.strategy_index);
  io(c.expert_parallel), io(c.expert_tensor_parallel);
  io(c.micro_batch), io(c.recompute), io(c.sharding), io(c.shard_group), io(c.shard_replicas);
  io(c.precision), io(c.hbm_gib), io(c.tokens_per_s), io(c.mfu), io(c.power_w);
  io(c.energy_per_token_j), io(c.hourly_usd), io(c.usd_per_million_tokens), io(c.time_to_train_s);
  io(c.stages);
}

template <class Self, class F>
void Fields(Self& m, F&& io) requires std::is_same_v<std::remove_const_t<Self>, ModelEvaluation> {
  io(m.model), io(m.pruned), io(m.best), io(m.score), io(m.best_per_hbm), io(m.expert), io(m.ilp_answers);
  io(m.fast_answers), io(m.max_gap), io(m.schedule_seconds), io(m.placement_seconds);
}

template <class Self, class F>
void Fields(Self& i, F&& io) requires std::is_same_v<std::remove_const_t<Self>, Incumbent> {
  io(i.throughputs), io(i.score);
}

template <class Self, class F>
void Fields(Self& p, F&& io) requires std::is_same_v<std::remove_const_t<Self>, PruneRecord> {
  io(p.tier), io(p.family), io(p.model_bounds), io(p.score_bound), io(p.incumbent);
}

template <class Self, class F>
void Fields(Self& e, F&& io) requires std::is_same_v<std::remove_const_t<Self>, ConfigEvaluation> {
  io(e.models), io(e.score), io(e.seconds), io(e.pruned);
}

template <class Self, class F>
void Fields(Self& t, F&& io) requires std::is_same_v<std::remove_const_t<Self>, SearchTask> {
  io(t.index), io(t.incumbent);
}

// The largest value of each enum a message may carry (a received value above it is malformed).
constexpr std::int64_t LastValue(RecomputeMode) {
  return static_cast<std::int64_t>(RecomputeMode::kPerOp);
}
constexpr std::int64_t LastValue(Precision) { return static_cast<std::int64_t>(Precision::kFp8); }
constexpr std::int64_t LastValue(Sharding) { return static_cast<std::int64_t>(Sharding::kParameters); }

struct Writer {
  ByteWriter& w;
  void operator()(bool v) const { w.Bool(v); }
  void operator()(int v) const { w.Int(v); }
  void operator()(std::int64_t v) const { w.Int(v); }
  void operator()(double v) const { w.Double(v); }
  void operator()(const std::string& v) const { w.String(v); }
  template <class E>
  requires std::is_enum_v<E>
  void operator()(E v) const { w.Int(static_cast<std::int64_t>(v)); }
  template <class T>
  void operator()(const std::vector<T>& v) const {
    w.Int(static_cast<std::int64_t>(v.size()));
    for (const auto& x : v) (*this)(x);
  }
  template <class T>
  void operator()(const std::optional<T>& v) const {
    w.Bool(v.has_value());
    if (v) (*this)(*v);
  }
  template <class T>
  void operator()(const Boxed<T>& v) const {
    w.Bool(v.has_value());
    if (v) (*this)(*v);
  }
  template <class T>
  requires std::is_class_v<T>
  void operator()(const T& x) const { Fields(x, *this); }
};

struct Reader {
  ByteReader& r;
  void operator()(bool& v) const { v = r.Bool(); }
  void operator()(int& v) const { v = static_cast<int>(r.Int()); }
  void operator()(std::int64_t& v) const { v = r.Int(); }
  void operator()(double& v) const { v = r.Double(); }
  void operator()(std::string& v) const { v = r.String(); }
  template <class E>
  requires std::is_enum_v<E>
  void operator()(E& v) const {
    const std::int64_t value = r.Int();
    if (value < 0 || value > LastValue(E{})) {
      throw Error("malformed message: enum value " + std::to_string(value));
    }
    v = static_cast<E>(value);
  }
  template <class T>
  void operator()(std::vector<T>& v) const {
    v.resize(r.Count(1));
    for (auto& x : v) (*this)(x);
  }
  template <class T>
  void operator()(std::optional<T>& v) const {
    v.reset();
    if (r.Bool()) (*this)(v.emplace());
  }
  template <class T>
  void operator()(Boxed<T>& v) const {
    v.reset();
    if (r.Bool()) (*this)(v.emplace());
  }
  template <class T>
  requires std::is_class_v<T>
  void operator()(T& x) const { Fields(x, *this); }
};

template <class T>
std::string Encode(const T& value) {
  ByteWriter w;
  Writer{w}(value);
  return w.Take();
}

template <class T>
T Decode(std::string_view bytes) {
  ByteReader r(bytes);
  T value;
  Reader{r}(value);
  r.ExpectEnd();
  return value;
}

}  // namespace

std::string EncodeConfigEvaluation(const ConfigEvaluation& evaluation) {
  return Encode(evaluation);
}

ConfigEvaluation DecodeConfigEvaluation(std::string_view bytes) {
  return Decode<ConfigEvaluation>(bytes);
}

std::string EncodeSearchTask(const SearchTask& task) { return Encode(task); }

SearchTask DecodeSearchTask(std::string_view bytes) { return Decode<SearchTask>(bytes); }

}  // namespace phaze
