// The binary form of a ConfigEvaluation that MPI workers send to rank 0: every field survives the
// round trip exactly (doubles bit for bit, including −0, denormals, infinities and NaN payloads),
// and malformed messages are errors, not crashes. Also the ByteWriter/ByteReader primitives.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>

#include "phaze/core/byte_stream.hpp"
#include "phaze/core/error.hpp"
#include "phaze/search/evaluation_codec.hpp"

namespace phaze {
namespace {

std::uint64_t Bits(double v) { return std::bit_cast<std::uint64_t>(v); }

TEST(ByteStream, PrimitivesRoundTripExactly) {
  const double values[] = {0.1, -0.0, 5e-324, std::numeric_limits<double>::infinity(),
                           std::numeric_limits<double>::quiet_NaN(), 1.0 / 3.0};
  ByteWriter w;
  w.Int(-1);
  w.Int(std::numeric_limits<std::int64_t>::max());
  for (double v : values) w.Double(v);
  w.String("");
  w.String(std::string("a\0b", 3));
  w.Bool(true);
  EXPECT_EQ(w.Bytes().size(), 8u * (2 + 6 + 2 + 1) + 3);
  ByteReader r(w.Bytes());
  EXPECT_EQ(r.Int(), -1);
  EXPECT_EQ(r.Int(), std::numeric_limits<std::int64_t>::max());
  for (double v : values) EXPECT_EQ(Bits(r.Double()), Bits(v));
  EXPECT_EQ(r.String(), "");
  EXPECT_EQ(r.String(), std::string("a\0b", 3));
  EXPECT_TRUE(r.Bool());
  EXPECT_TRUE(r.AtEnd());
  EXPECT_NO_THROW(r.ExpectEnd());
  // Little-endian on the wire, whatever the host: 1 is 01 00 … 00.
  ByteWriter one;
  one.Int(1);
  EXPECT_EQ(one.Bytes(), std::string("\x01\0\0\0\0\0\0\0", 8));
}

TEST(ByteStream, MalformedMessagesAreErrors) {
  ByteWriter w;
  w.Int(5);
  EXPECT_THROW(ByteReader(w.Bytes().substr(0, 7)).Int(), Error);  // truncated
  ByteReader overlong(w.Bytes());
  EXPECT_THROW(overlong.String(), Error);  // a 5-byte string with no bytes
  ByteWriter negative;
  negative.Int(-3);
  EXPECT_THROW(ByteReader(negative.Bytes()).Count(), Error);
  const std::string with_extra = w.Bytes() + "x";  // a ByteReader views its bytes: keep them alive
  ByteReader extra(with_extra);
  extra.Int();
  EXPECT_THROW(extra.ExpectEnd(), Error);
}

PlanChoice SamplePlan(double seed, bool feasible) {
  PlanChoice c;
  c.feasible = feasible;
  c.reason = feasible ? "" : "stage 3 needs 81.2 GiB, exceeds the HBM";
  c.plan.feasible = feasible;
  c.plan.reason = c.reason;
  c.plan.time_per_batch_s = seed * 1.1;
  c.plan.throughput_samples_per_s = seed * 3.3;
  c.plan.tensor_parallel = 2;
  c.plan.data_parallel = 64;
  c.plan.pipeline_stages = 8;
  c.plan.micro_batches = 512;
  for (int k = 0; k < 2; ++k) {
    StagePlan s;
    s.first_layer = k == 0 ? 0 : 4;
    s.last_layer = k == 0 ? 3 : 9;
    s.devices = 2 + 2 * k;
    s.load_s = seed * 0.1 * (k + 1);
    s.forward_s = seed * 0.03;
    s.backward_s = seed / 3;
    s.recompute_s = k == 0 ? -0.0 : seed * 0.07;
    s.peak_memory_bytes = k == 0 ? 1e9 + seed : -0.0;
    s.memory = {1e8 + k, 2e8, 6e8 / 7, seed * 1e7, 5e-324, 8.5};
    c.plan.stages.push_back(s);
  }
  c.plan.virtual_stages = 3;
  c.plan.breakdown = {.forward_s = seed,
                      .backward_s = seed / 3,
                      .recompute_s = 0.1,
                      .pipeline_send_s = 0.2,
                      .sharding_s = 0.3,
                      .bubble_s = 1.0 / 7,
                      .data_parallel_s = 0.5,
                      .data_parallel_total_s = 0.75,
                      .optimizer_s = 5e-324,
                      .tied_embedding_s = 1,
                      .bottleneck_stage = 2};
  c.plan.max_stage_load_s = seed / 7;
  c.plan.bubble_share = 0.0625;
  c.plan.sync_share = 5e-324;
  c.strategy = "context_parallel over megatron×" + std::to_string(seed);
  c.strategy_index = 1;
  c.micro_batch = 4;
  c.recompute = RecomputeMode::kSelective;
  c.sharding = Sharding::kParameters;
  c.shard_group = kShardWithinNode;
  c.shard_replicas = 8;
  c.hbm_gib = 80;
  c.tokens_per_s = seed * 1e6;
  c.mfu = 0.41;
  c.stages = {{"embedding", "block_3", 4, 2, 0.5, 2e9}, {"block_4", "head", 6, 4, 0.25, 3e9}};
  return c;
}

TEST(EvaluationCodec, EveryFieldRoundTrips) {
  ConfigEvaluation e;
  e.score = 1.0 / 3.0;
  e.seconds = 12.5;
  for (int m = 0; m < 2; ++m) {
    ModelEvaluation me;
    me.model = m == 0 ? "bert-large" : "gpt2-xl";
    me.best = SamplePlan(1.5 + m, true);
    me.best_per_hbm = {SamplePlan(0.5, false), SamplePlan(2.5, true)};
    if (m == 1) me.expert = SamplePlan(0.75, true);
    me.ilp_answers = 17;
    me.fast_answers = 3;
    me.max_gap = 0.012;
    me.schedule_seconds = 0.8;
    me.placement_seconds = 0.01;
    e.models.push_back(me);
  }
  const std::string bytes = EncodeConfigEvaluation(e);
  const ConfigEvaluation d = DecodeConfigEvaluation(bytes);
  EXPECT_EQ(EncodeConfigEvaluation(d), bytes);

  // Field by field, independently of the encoder.
  EXPECT_EQ(Bits(d.score), Bits(e.score));
  EXPECT_EQ(d.seconds, 12.5);
  ASSERT_EQ(d.models.size(), 2u);
  for (std::size_t m = 0; m < 2; ++m) {
    const ModelEvaluation& a = e.models[m];
    const ModelEvaluation& b = d.models[m];
    EXPECT_EQ(b.model, a.model);
    auto same_plan = [](const PlanChoice& x, const PlanChoice& y) {
      EXPECT_EQ(x.feasible, y.feasible);
      EXPECT_EQ(x.reason, y.reason);
      EXPECT_EQ(x.plan.feasible, y.plan.feasible);
      EXPECT_EQ(x.plan.reason, y.plan.reason);
      EXPECT_EQ(Bits(x.plan.time_per_batch_s), Bits(y.plan.time_per_batch_s));
      EXPECT_EQ(Bits(x.plan.throughput_samples_per_s), Bits(y.plan.throughput_samples_per_s));
      EXPECT_EQ(x.plan.tensor_parallel, y.plan.tensor_parallel);
      EXPECT_EQ(x.plan.data_parallel, y.plan.data_parallel);
      EXPECT_EQ(x.plan.pipeline_stages, y.plan.pipeline_stages);
      EXPECT_EQ(x.plan.micro_batches, y.plan.micro_batches);
      ASSERT_EQ(x.plan.stages.size(), y.plan.stages.size());
      for (std::size_t i = 0; i < x.plan.stages.size(); ++i) {
        EXPECT_EQ(x.plan.stages[i].first_layer, y.plan.stages[i].first_layer);
        EXPECT_EQ(x.plan.stages[i].last_layer, y.plan.stages[i].last_layer);
        EXPECT_EQ(x.plan.stages[i].devices, y.plan.stages[i].devices);
        EXPECT_EQ(Bits(x.plan.stages[i].load_s), Bits(y.plan.stages[i].load_s));
        EXPECT_EQ(Bits(x.plan.stages[i].peak_memory_bytes), Bits(y.plan.stages[i].peak_memory_bytes));
        EXPECT_EQ(Bits(x.plan.stages[i].forward_s), Bits(y.plan.stages[i].forward_s));
        EXPECT_EQ(Bits(x.plan.stages[i].backward_s), Bits(y.plan.stages[i].backward_s));
        EXPECT_EQ(Bits(x.plan.stages[i].recompute_s), Bits(y.plan.stages[i].recompute_s));
        const StageMemory& mx = x.plan.stages[i].memory;
        const StageMemory& my = y.plan.stages[i].memory;
        for (auto f : {&StageMemory::weight_bytes, &StageMemory::gradient_bytes,
                       &StageMemory::optimizer_state_bytes, &StageMemory::activation_bytes,
                       &StageMemory::working_bytes, &StageMemory::in_flight}) {
          EXPECT_EQ(Bits(mx.*f), Bits(my.*f));
        }
      }
      EXPECT_EQ(x.plan.virtual_stages, y.plan.virtual_stages);
      const StepBreakdown& bx = x.plan.breakdown;
      const StepBreakdown& by = y.plan.breakdown;
      for (auto f :
           {&StepBreakdown::forward_s, &StepBreakdown::backward_s, &StepBreakdown::recompute_s,
            &StepBreakdown::pipeline_send_s, &StepBreakdown::sharding_s, &StepBreakdown::bubble_s,
            &StepBreakdown::data_parallel_s, &StepBreakdown::data_parallel_total_s,
            &StepBreakdown::optimizer_s, &StepBreakdown::tied_embedding_s}) {
        EXPECT_EQ(Bits(bx.*f), Bits(by.*f));
      }
      EXPECT_EQ(bx.bottleneck_stage, by.bottleneck_stage);
      EXPECT_EQ(bx.pipeline_level, by.pipeline_level);
      EXPECT_EQ(Bits(x.plan.max_stage_load_s), Bits(y.plan.max_stage_load_s));
      EXPECT_EQ(Bits(x.plan.bubble_share), Bits(y.plan.bubble_share));
      EXPECT_EQ(Bits(x.plan.sync_share), Bits(y.plan.sync_share));
      EXPECT_EQ(x.strategy, y.strategy);
      EXPECT_EQ(x.strategy_index, y.strategy_index);
      EXPECT_EQ(x.micro_batch, y.micro_batch);
      EXPECT_EQ(x.recompute, y.recompute);
      EXPECT_EQ(x.sharding, y.sharding);
      EXPECT_EQ(x.shard_group, y.shard_group);
      EXPECT_EQ(x.shard_replicas, y.shard_replicas);
      EXPECT_EQ(x.hbm_gib, y.hbm_gib);
      EXPECT_EQ(Bits(x.tokens_per_s), Bits(y.tokens_per_s));
      EXPECT_EQ(Bits(x.mfu), Bits(y.mfu));
      ASSERT_EQ(x.stages.size(), y.stages.size());
      for (std::size_t i = 0; i < x.stages.size(); ++i) {
        EXPECT_EQ(x.stages[i].first_layer, y.stages[i].first_layer);
        EXPECT_EQ(x.stages[i].last_layer, y.stages[i].last_layer);
        EXPECT_EQ(x.stages[i].layers, y.stages[i].layers);
        EXPECT_EQ(x.stages[i].devices, y.stages[i].devices);
        EXPECT_EQ(x.stages[i].load_s, y.stages[i].load_s);
        EXPECT_EQ(x.stages[i].peak_memory_bytes, y.stages[i].peak_memory_bytes);
      }
    };
    same_plan(a.best, b.best);
    ASSERT_EQ(b.best_per_hbm.size(), 2u);
    same_plan(a.best_per_hbm[0], b.best_per_hbm[0]);
    same_plan(a.best_per_hbm[1], b.best_per_hbm[1]);
    ASSERT_EQ(a.expert.has_value(), b.expert.has_value());
    if (a.expert) same_plan(*a.expert, *b.expert);
    EXPECT_EQ(b.ilp_answers, 17);
    EXPECT_EQ(b.fast_answers, 3);
    EXPECT_EQ(b.max_gap, 0.012);
    EXPECT_EQ(b.schedule_seconds, 0.8);
    EXPECT_EQ(b.placement_seconds, 0.01);
  }

  EXPECT_FALSE(d.pruned.has_value());

  // Any truncation is an Error.
  for (std::size_t cut : {std::size_t{0}, std::size_t{9}, bytes.size() / 2, bytes.size() - 1}) {
    EXPECT_THROW(DecodeConfigEvaluation(std::string_view(bytes).substr(0, cut)), Error) << cut;
  }
}

TEST(EvaluationCodec, PruneRecordsAndTasksRoundTrip) {
  ConfigEvaluation e;
  ModelEvaluation me;
  me.model = "gpt2-xl";
  me.best.reason = "pruned";
  e.models.push_back(me);
  PruneRecord p;
  p.tier = 2;
  p.model_bounds = {1.0 / 3.0, 7e9};
  p.score_bound = 2.0 / 7.0;
  p.incumbent.throughputs = {0.1, 1e-300};
  p.incumbent.score = 5.5;
  e.pruned = p;
  const std::string bytes = EncodeConfigEvaluation(e);
  const ConfigEvaluation d = DecodeConfigEvaluation(bytes);
  ASSERT_TRUE(d.pruned.has_value());
  EXPECT_EQ(d.pruned->tier, 2);
  EXPECT_EQ(d.pruned->model_bounds, p.model_bounds);
  EXPECT_EQ(Bits(d.pruned->score_bound), Bits(p.score_bound));
  EXPECT_EQ(d.pruned->incumbent.throughputs, p.incumbent.throughputs);
  EXPECT_EQ(d.pruned->incumbent.score, 5.5);
  EXPECT_EQ(d.models.at(0).best.reason, "pruned");
  EXPECT_THROW(DecodeConfigEvaluation(std::string_view(bytes).substr(0, bytes.size() - 1)), Error);
  EXPECT_THROW(DecodeConfigEvaluation(bytes + "x"), Error);
  // An enum value out of range: the one byte where kNone and kFull encode differently set to 7.
  ConfigEvaluation full = e;
  full.models[0].best.recompute = RecomputeMode::kFull;
  std::string bad = EncodeConfigEvaluation(full);
  ASSERT_EQ(bad.size(), bytes.size());
  std::size_t at = 0;
  while (at < bad.size() && bad[at] == bytes[at]) ++at;
  ASSERT_LT(at, bad.size());
  bad[at] = 7;
  try {
    DecodeConfigEvaluation(bad);
    FAIL() << "decoded a recompute mode of 7";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("malformed message: enum value 7"), std::string::npos)
        << error.what();
  }

  SearchTask plain{41, std::nullopt};
  const SearchTask a = DecodeSearchTask(EncodeSearchTask(plain));
  EXPECT_EQ(a.index, 41);
  EXPECT_FALSE(a.incumbent.has_value());
  SearchTask with{29359, p.incumbent};
  const std::string task_bytes = EncodeSearchTask(with);
  const SearchTask b = DecodeSearchTask(task_bytes);
  EXPECT_EQ(b.index, 29359);
  ASSERT_TRUE(b.incumbent.has_value());
  EXPECT_EQ(b.incumbent->throughputs, p.incumbent.throughputs);
  EXPECT_EQ(b.incumbent->score, 5.5);
  EXPECT_THROW(DecodeSearchTask(std::string_view(task_bytes).substr(0, task_bytes.size() - 3)),
               Error);
}

}  // namespace
}  // namespace phaze
