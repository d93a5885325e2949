#include "phaze/search/evaluation_codec.hpp"

#include "phaze/core/byte_stream.hpp"
#include "phaze/core/error.hpp"
#include "phaze/graph/layer_graph.hpp"

namespace phaze {
namespace {

// Each type has one Put and one Get, field by field in declaration order.

// The doubles of a stage's memory and of a step breakdown, in declaration order.
std::vector<double*> Doubles(StageMemory& m) {
  return {&m.weight_bytes,    &m.gradient_bytes, &m.optimizer_state_bytes,
          &m.activation_bytes, &m.working_bytes, &m.in_flight};
}
std::vector<double*> Doubles(StepBreakdown& b) {
  return {&b.forward_s,       &b.backward_s,  &b.recompute_s,     &b.pipeline_send_s,
          &b.bubble_s,        &b.data_parallel_s, &b.optimizer_s, &b.tied_embedding_s};
}
template <class T>
void PutDoubles(ByteWriter& w, const T& value) {
  T copy = value;
  for (double* d : Doubles(copy)) w.Double(*d);
}
template <class T>
void GetDoubles(ByteReader& r, T& value) {
  for (double* d : Doubles(value)) *d = r.Double();
}

void Put(ByteWriter& w, const PlacementPlan& p) {
  w.Bool(p.feasible);
  w.String(p.reason);
  w.Double(p.time_per_batch_s);
  w.Double(p.throughput_samples_per_s);
  w.Int(p.tensor_parallel);
  w.Int(p.data_parallel);
  w.Int(p.pipeline_stages);
  w.Int(p.virtual_stages);
  w.Int(p.micro_batches);
  w.Int(static_cast<std::int64_t>(p.stages.size()));
  for (const auto& s : p.stages) {
    w.Int(s.first_layer);
    w.Int(s.last_layer);
    w.Int(s.devices);
    w.Double(s.load_s);
    w.Double(s.forward_s);
    w.Double(s.backward_s);
    w.Double(s.recompute_s);
    w.Double(s.peak_memory_bytes);
    PutDoubles(w, s.memory);
  }
  w.Double(p.max_stage_load_s);
  w.Double(p.bubble_share);
  w.Double(p.sync_share);
  PutDoubles(w, p.breakdown);
  w.Int(p.breakdown.bottleneck_stage);
  w.Int(p.breakdown.pipeline_level);
}

int GetInt32(ByteReader& r) { return static_cast<int>(r.Int()); }

void Get(ByteReader& r, PlacementPlan& p) {
  p.feasible = r.Bool();
  p.reason = r.String();
  p.time_per_batch_s = r.Double();
  p.throughput_samples_per_s = r.Double();
  p.tensor_parallel = GetInt32(r);
  p.data_parallel = GetInt32(r);
  p.pipeline_stages = GetInt32(r);
  p.virtual_stages = GetInt32(r);
  p.micro_batches = r.Int();
  p.stages.resize(r.Count(40));
  for (auto& s : p.stages) {
    s.first_layer = GetInt32(r);
    s.last_layer = GetInt32(r);
    s.devices = GetInt32(r);
    s.load_s = r.Double();
    s.forward_s = r.Double();
    s.backward_s = r.Double();
    s.recompute_s = r.Double();
    s.peak_memory_bytes = r.Double();
    GetDoubles(r, s.memory);
  }
  p.max_stage_load_s = r.Double();
  p.bubble_share = r.Double();
  p.sync_share = r.Double();
  GetDoubles(r, p.breakdown);
  p.breakdown.bottleneck_stage = GetInt32(r);
  p.breakdown.pipeline_level = GetInt32(r);
}

void Put(ByteWriter& w, const PlanChoice& c) {
  w.Bool(c.feasible);
  w.String(c.reason);
  Put(w, c.plan);
  w.String(c.strategy);
  w.Int(c.strategy_index);
  w.Int(c.micro_batch);
  w.Int(static_cast<std::int64_t>(c.recompute));
  w.Double(c.hbm_gib);
  w.Double(c.tokens_per_s);
  w.Double(c.mfu);
  w.Int(static_cast<std::int64_t>(c.stages.size()));
  for (const auto& s : c.stages) {
    w.String(s.first_layer);
    w.String(s.last_layer);
    w.Int(s.layers);
    w.Int(s.devices);
    w.Double(s.load_s);
    w.Double(s.peak_memory_bytes);
  }
}

void Get(ByteReader& r, PlanChoice& c) {
  c.feasible = r.Bool();
  c.reason = r.String();
  Get(r, c.plan);
  c.strategy = r.String();
  c.strategy_index = GetInt32(r);
  c.micro_batch = r.Int();
  const std::int64_t mode = r.Int();
  if (mode < 0 || mode > static_cast<std::int64_t>(RecomputeMode::kFull)) {
    throw Error("malformed message: recompute mode " + std::to_string(mode));
  }
  c.recompute = static_cast<RecomputeMode>(mode);
  c.hbm_gib = r.Double();
  c.tokens_per_s = r.Double();
  c.mfu = r.Double();
  c.stages.resize(r.Count(48));
  for (auto& s : c.stages) {
    s.first_layer = r.String();
    s.last_layer = r.String();
    s.layers = GetInt32(r);
    s.devices = GetInt32(r);
    s.load_s = r.Double();
    s.peak_memory_bytes = r.Double();
  }
}

void Put(ByteWriter& w, const ModelEvaluation& m) {
  w.String(m.model);
  w.Bool(m.pruned);
  Put(w, m.best);
  w.Int(static_cast<std::int64_t>(m.best_per_hbm.size()));
  for (const auto& p : m.best_per_hbm) Put(w, p);
  w.Bool(m.expert.has_value());
  if (m.expert) Put(w, *m.expert);
  w.Int(m.ilp_answers);
  w.Int(m.fast_answers);
  w.Double(m.max_gap);
  w.Double(m.schedule_seconds);
  w.Double(m.placement_seconds);
}

void Get(ByteReader& r, ModelEvaluation& m) {
  m.model = r.String();
  m.pruned = r.Bool();
  Get(r, m.best);
  m.best_per_hbm.resize(r.Count());
  for (auto& p : m.best_per_hbm) Get(r, p);
  if (r.Bool()) Get(r, m.expert.emplace());
  m.ilp_answers = GetInt32(r);
  m.fast_answers = GetInt32(r);
  m.max_gap = r.Double();
  m.schedule_seconds = r.Double();
  m.placement_seconds = r.Double();
}

void PutDoubleList(ByteWriter& w, const std::vector<double>& v) {
  w.Int(static_cast<std::int64_t>(v.size()));
  for (double d : v) w.Double(d);
}

void GetDoubleList(ByteReader& r, std::vector<double>& v) {
  v.resize(r.Count(8));
  for (double& d : v) d = r.Double();
}

void Put(ByteWriter& w, const Incumbent& i) {
  PutDoubleList(w, i.throughputs);
  w.Double(i.score);
}

void Get(ByteReader& r, Incumbent& i) {
  GetDoubleList(r, i.throughputs);
  i.score = r.Double();
}

void Put(ByteWriter& w, const PruneRecord& p) {
  w.Int(p.tier);
  PutDoubleList(w, p.model_bounds);
  w.Double(p.score_bound);
  Put(w, p.incumbent);
}

void Get(ByteReader& r, PruneRecord& p) {
  p.tier = GetInt32(r);
  GetDoubleList(r, p.model_bounds);
  p.score_bound = r.Double();
  Get(r, p.incumbent);
}

}  // namespace

std::string EncodeConfigEvaluation(const ConfigEvaluation& evaluation) {
  ByteWriter w;
  w.Int(static_cast<std::int64_t>(evaluation.models.size()));
  for (const auto& m : evaluation.models) Put(w, m);
  w.Double(evaluation.score);
  w.Double(evaluation.seconds);
  w.Bool(evaluation.pruned.has_value());
  if (evaluation.pruned) Put(w, *evaluation.pruned);
  return w.Take();
}

std::string EncodeSearchTask(const SearchTask& task) {
  ByteWriter w;
  w.Int(task.index);
  w.Bool(task.incumbent.has_value());
  if (task.incumbent) Put(w, *task.incumbent);
  return w.Take();
}

SearchTask DecodeSearchTask(std::string_view bytes) {
  ByteReader r(bytes);
  SearchTask task;
  task.index = r.Int();
  if (r.Bool()) Get(r, task.incumbent.emplace());
  r.ExpectEnd();
  return task;
}

ConfigEvaluation DecodeConfigEvaluation(std::string_view bytes) {
  ByteReader r(bytes);
  ConfigEvaluation e;
  e.models.resize(r.Count());
  for (auto& m : e.models) Get(r, m);
  e.score = r.Double();
  e.seconds = r.Double();
  if (r.Bool()) Get(r, e.pruned.emplace());
  r.ExpectEnd();
  return e;
}

}  // namespace phaze
