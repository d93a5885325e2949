// The pipeline split a plan prices and the launch arguments that reproduce it, against
// Megatron-LM's layout parser (pipeline_parallel_layer_layout.py's parse_str_to_list,
// re-implemented here with its two regular expressions) and TorchTitan's
// generate_llm_fqn_per_model_part (its arithmetic written out by hand per case), on splits counted
// by hand.
#include "phaze/search/pipeline_split.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <string>
#include <vector>

#include "phaze/graph/graph_builder.hpp"
#include "test_paths.hpp"

namespace phaze {
namespace {

// Megatron-LM's parse: commas dropped, "(…)*n" then "x*n" unrolled, chunks split at '|'.
std::vector<std::string> MegatronChunks(std::string layout) {
  layout.erase(std::remove(layout.begin(), layout.end(), ','), layout.end());
  for (const std::regex& pattern :
       {std::regex(R"(\(([^)]+)\)\*(\d+))"), std::regex(R"((.)\*(\d+))")}) {
    std::string out;
    std::smatch m;
    std::string rest = layout;
    while (std::regex_search(rest, m, pattern)) {
      out += m.prefix().str();
      for (int i = 0; i < std::stoi(m[2].str()); ++i) out += m[1].str();
      rest = m.suffix().str();
    }
    layout = out + rest;
  }
  std::vector<std::string> chunks(1);
  for (char c : layout) {
    if (c == '|') {
      chunks.emplace_back();
    } else {
      chunks.back() += c;
    }
  }
  return chunks;
}

// Each chunk's blocks as Megatron-LM reads the layout, checking the embedding opens the first
// chunk and the loss closes the last, once each.
std::vector<int> MegatronBlocks(const std::string& layout) {
  const std::vector<std::string> chunks = MegatronChunks(layout);
  std::string all;
  std::vector<int> blocks;
  for (const std::string& c : chunks) {
    all += c;
    blocks.push_back(static_cast<int>(std::count(c.begin(), c.end(), 't')));
  }
  EXPECT_EQ(all.front(), 'E') << layout;
  EXPECT_EQ(all.back(), 'L') << layout;
  EXPECT_EQ(std::count(all.begin(), all.end(), 'E'), 1) << layout;
  EXPECT_EQ(std::count(all.begin(), all.end(), 'L'), 1) << layout;
  return blocks;
}

LayerGraph Llama2() {
  GraphOptions o;
  return BuildLayerGraph(LoadModelSpec(std::string(PHAZE_SOURCE_DIR) + "/workloads/llama2-7b.yaml"),
                         o);
}

PlanRequest Plan(int p, int v, std::vector<int> starts = {}) {
  PlanRequest r;
  r.pipeline_stages = p;
  r.virtual_stages = v;
  r.stage_starts = std::move(starts);
  return r;
}

TEST(PipelineSplit, ThePricedSplitOfEachChunk) {
  const LayerGraph g = Llama2();  // layer 0 the embedding, 1..32 the blocks, 33 the head
  ASSERT_EQ(g.layers.size(), 34u);
  // Megatron-LM's stage starts: 32 blocks over 3, the first stages one more.
  EXPECT_EQ(PlanPipelineSplit(g, Plan(3, 1)).blocks, (std::vector<int>{11, 11, 10}));
  EXPECT_EQ(PlanPipelineSplit(g, Plan(4, 2)).blocks, std::vector<int>(8, 4));
  // Explicit starts: layers 0–9 (the embedding and blocks 1–9), 10–33 (23 blocks and the head).
  EXPECT_EQ(PlanPipelineSplit(g, Plan(2, 1, {10})).blocks, (std::vector<int>{9, 23}));
  // The embedding alone on the first device.
  EXPECT_EQ(PlanPipelineSplit(g, Plan(2, 1, {1})).blocks, (std::vector<int>{0, 32}));
  // v = 2 over p = 4, the devices holding 7, 9, 9, 7 blocks (starts 8, 17, 26): chunk s is device
  // s mod 4's (s div 4)-th; the first device's extra block on its second chunk, the others' on
  // their first: 3 5 5 4 | 4 4 4 3.
  EXPECT_EQ(PlanPipelineSplit(g, Plan(4, 2, {8, 17, 26})).blocks,
            (std::vector<int>{3, 5, 5, 4, 4, 4, 4, 3}));
  EXPECT_EQ(PlanPipelineSplit(g, Plan(4, 2, {8, 17, 26})).Text(), "3, 5 × 2, 4 × 4, 3");
}

TEST(PipelineSplit, MegatronLayoutReadsBackAsThePricedSplit) {
  // Llama 3.1 405B's 126 blocks as TorchTitan splits them over 16 chunks: 7, 8 × 14, 7.
  PipelineSplit titan;
  titan.blocks = {7, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 7};
  EXPECT_EQ(MegatronLayout(titan), "Et*7|(t*8|)*14,t*7L");
  EXPECT_EQ(MegatronBlocks(MegatronLayout(titan)), titan.blocks);
  for (const std::vector<int>& blocks : {std::vector<int>{11, 11, 10},
                                         {9, 23},
                                         {0, 32},
                                         {32, 0},
                                         {4, 0, 0, 0, 4},
                                         {1, 1, 1, 1},
                                         {5, 5, 6, 6, 5, 5},
                                         {2, 1},
                                         {3, 3, 3, 2, 2, 2, 2, 2}}) {
    PipelineSplit split;
    split.blocks = blocks;
    EXPECT_EQ(MegatronBlocks(MegatronLayout(split)), blocks) << MegatronLayout(split);
  }
  PipelineSplit gaps;
  gaps.blocks = {4, 0, 0, 0, 4};
  EXPECT_EQ(MegatronLayout(gaps), "Et*4|(|)*3,t*4L");
}

TEST(PipelineSplit, TorchTitansLessLayersGiveThePricedSplit) {
  int a = -1, b = -1, lps = -1;
  // Even: 32 over 4 with no layers less; looped (v 2 over p 2) the 8 a stage.
  EXPECT_TRUE(TorchTitanLessLayers(PipelineSplit::Default(32, 4), 2, &a, &b, &lps));
  EXPECT_EQ(std::vector<int>({a, b, lps}), std::vector<int>({0, 0, 8}));
  // Megatron-LM's stage starts, 11, 11, 10: 32 effective layers over 3, the first two one more.
  EXPECT_TRUE(TorchTitanLessLayers(PipelineSplit::Default(32, 3), 1, &a, &b, &lps));
  EXPECT_EQ(std::vector<int>({a, b, lps}), std::vector<int>({0, 0, 0}));
  // 405B's 7, 8 × 14, 7 is TorchTitan's defaults, 1 and 1: (126 + 2) / 16 = 8 a stage, the first
  // and last one less; ⌈128 / 8⌉ = 16 stages.
  PipelineSplit titan;
  titan.blocks = {7, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 7};
  EXPECT_TRUE(TorchTitanLessLayers(titan, 2, &a, &b, &lps));
  EXPECT_EQ(std::vector<int>({a, b, lps}), std::vector<int>({1, 1, 8}));
  // 9 and 23: 14 less on the first, (32 + 14) / 2 = 23 a stage, the first 23 − 14 = 9.
  PipelineSplit uneven;
  uneven.blocks = {9, 23};
  EXPECT_TRUE(TorchTitanLessLayers(uneven, 1, &a, &b, &lps));
  EXPECT_EQ(std::vector<int>({a, b}), std::vector<int>({14, 0}));
  // Middle stages two blocks apart are no pair's: TorchTitan's middle stages differ by one at
  // most (its extra layers on the first stages). 4, 6, 4 is a 2, b 1: 17 over 3 is 5 a stage, the
  // first two one more, the first 2 less and the last 1.
  PipelineSplit middle;
  middle.blocks = {4, 6, 4};
  EXPECT_TRUE(TorchTitanLessLayers(middle, 1, &a, &b, &lps));
  EXPECT_EQ(std::vector<int>({a, b}), std::vector<int>({2, 1}));
  middle.blocks = {5, 4, 6, 5};
  EXPECT_FALSE(TorchTitanLessLayers(middle, 1, &a, &b, &lps));
  // 3, 5, 5, 4 | 4, 4, 4, 3 (v 2 over p 4) is a 2, b 1: 35 over 8 is 4, the first three one more.
  // No layers_per_stage makes ⌈35 / it⌉ 8; at v 2 none is needed (TorchTitan's two chunks a
  // device), at v 4 over p 2 one is.
  PipelineSplit looped;
  looped.blocks = {3, 5, 5, 4, 4, 4, 4, 3};
  EXPECT_TRUE(TorchTitanLessLayers(looped, 2, &a, &b, &lps));
  EXPECT_EQ(std::vector<int>({a, b, lps}), std::vector<int>({2, 1, 0}));
  EXPECT_FALSE(TorchTitanLessLayers(looped, 4, &a, &b, &lps));
}

}  // namespace
}  // namespace phaze
