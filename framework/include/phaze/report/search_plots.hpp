// The SVG plots of a search (share/runs/README.md shows them): each is drawn on an SvgCanvas, so
// its canvas fits its labels, and every colour it uses has a legend entry.
#pragma once

#include <string>

#include "phaze/search/search_driver.hpp"

namespace phaze {

// Explored configs' common score (search.objective's) against area, with their Pareto front (no other explored config
// has less area and more throughput), the common winner and every global baseline preset (with
// our DP, scored like a config), each labelled.
std::string ThroughputAreaSvg(const SearchResults& results);

// The same against average power per device (ConfigEvaluation::MeanPowerW; a baseline's mean over
// its plans), with the power–throughput front and, when set, the power budget on the axis.
std::string ThroughputPowerSvg(const SearchResults& results);

// The common winner's pipeline per model (each model's own best when there is no common winner):
// stages as boxes sized by layer count, shaded by their load relative to the slowest stage.
std::string PipelineSvg(const SearchResults& results);

// Per-device memory of every stage of the same plans, stacked by kind (weights, gradients,
// optimizer state, activations, working set) against the HBM capacity the plan was found for.
std::string MemorySvg(const SearchResults& results);

}  // namespace phaze
