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

void Put(ByteWriter& w, const LayerScheduleSummary& s) {
  w.Int(s.micro_batch);
  w.Int(s.width);
  w.String(s.layer);
  w.Int(static_cast<std::int64_t>(s.pass));
  w.Double(s.makespan_s);
  w.Double(s.sequential_s);
  w.String(s.path);
  w.String(s.status);
  w.Double(s.gap);
}

void Get(ByteReader& r, LayerScheduleSummary& s) {
  s.micro_batch = r.Int();
  s.width = r.Int();
  s.layer = r.String();
  const std::int64_t pass = r.Int();
  if (pass < 0 || pass > static_cast<std::int64_t>(Pass::kRecompute)) {
    throw Error("malformed message: pass " + std::to_string(pass));
  }
  s.pass = static_cast<Pass>(pass);
  s.makespan_s = r.Double();
  s.sequential_s = r.Double();
  s.path = r.String();
  s.status = r.String();
  s.gap = r.Double();
}

void Put(ByteWriter& w, const ModelEvaluation& m) {
  w.String(m.model);
  Put(w, m.best);
  w.Int(static_cast<std::int64_t>(m.best_per_hbm.size()));
  for (const auto& p : m.best_per_hbm) Put(w, p);
  w.Bool(m.expert.has_value());
  if (m.expert) Put(w, *m.expert);
  w.Int(static_cast<std::int64_t>(m.schedules.size()));
  for (const auto& s : m.schedules) Put(w, s);
  w.Int(m.ilp_answers);
  w.Int(m.fast_answers);
  w.Double(m.max_gap);
  w.Double(m.schedule_seconds);
  w.Double(m.placement_seconds);
}

void Get(ByteReader& r, ModelEvaluation& m) {
  m.model = r.String();
  Get(r, m.best);
  m.best_per_hbm.resize(r.Count());
  for (auto& p : m.best_per_hbm) Get(r, p);
  if (r.Bool()) Get(r, m.expert.emplace());
  m.schedules.resize(r.Count());
  for (auto& s : m.schedules) Get(r, s);
  m.ilp_answers = GetInt32(r);
  m.fast_answers = GetInt32(r);
  m.max_gap = r.Double();
  m.schedule_seconds = r.Double();
  m.placement_seconds = r.Double();
}

}  // namespace

std::string EncodeConfigEvaluation(const ConfigEvaluation& evaluation) {
  ByteWriter w;
  w.Int(static_cast<std::int64_t>(evaluation.models.size()));
  for (const auto& m : evaluation.models) Put(w, m);
  w.Double(evaluation.score);
  w.Double(evaluation.seconds);
  return w.Take();
}

ConfigEvaluation DecodeConfigEvaluation(std::string_view bytes) {
  ByteReader r(bytes);
  ConfigEvaluation e;
  e.models.resize(r.Count());
  for (auto& m : e.models) Get(r, m);
  e.score = r.Double();
  e.seconds = r.Double();
  r.ExpectEnd();
  return e;
}

}  // namespace phaze
