// Internal: the option sets and entry points of the `phaze` subcommands, one .cpp per command.
#pragma once

#include <boost/program_options/options_description.hpp>

#include "phaze/cli/command_context.hpp"

namespace phaze::cli {

inline void NoOptions(boost::program_options::options_description&) {}

void AddSearchOptions(boost::program_options::options_description& d);
int RunSearch(CommandContext& ctx);

void AddPlaceOptions(boost::program_options::options_description& d);
int RunPlace(CommandContext& ctx);

void AddGraphOptions(boost::program_options::options_description& d);
int RunGraph(CommandContext& ctx);

void AddArchOptions(boost::program_options::options_description& d);
int RunArch(CommandContext& ctx);

void AddEstimateOptions(boost::program_options::options_description& d);
int RunEstimate(CommandContext& ctx);

void AddScheduleOptions(boost::program_options::options_description& d);
int RunSchedule(CommandContext& ctx);

void AddPluginsOptions(boost::program_options::options_description& d);
int RunPlugins(CommandContext& ctx);

}  // namespace phaze::cli
