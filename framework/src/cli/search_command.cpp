// `phaze search --config RUN.yaml`: validates the run config and the plugin names it uses. The
// search driver itself is built by issue 9; until then the command stops after validation.
#include "commands.hpp"
#include "phaze/config/run_config.hpp"
#include "phaze/core/error.hpp"

namespace phaze::cli {

void AddSearchOptions(boost::program_options::options_description&) {}

int RunSearch(CommandContext& ctx) {
  if (ctx.global.config.empty()) {
    throw UsageError("phaze search: --config RUN.yaml is required (see share/runs/)");
  }
  RunConfig rc = RunConfig::ParseFile(ctx.global.config);
  rc.CheckComponents(ctx.registry, /*check_solver=*/true, /*check_estimator=*/true,
                     /*check_strategy=*/true);
  ctx.log.Verbose("effective run config:\n" + rc.ToJson().Dump());
  throw NotImplementedError("phaze search: not implemented yet: the run config '" +
                            ctx.global.config +
                            "' is valid, but the search driver (issue 9) is not built in this "
                            "version");
}

}  // namespace phaze::cli
