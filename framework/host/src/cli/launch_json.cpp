#include "commands.hpp"

namespace phaze::cli {

namespace {

// `key`: the arguments, or null with `key`_note saying why the framework cannot run the plan.
void PutArgs(Json& j, const std::string& key, const std::vector<std::string>& args,
             const std::string& why) {
  if (args.empty()) {
    j[key] = Json();
    j[key + "_note"] = why;
    return;
  }
  Json a = Json::MakeArray();
  for (const std::string& s : args) a.Push(s);
  j[key] = a;
}

}  // namespace

void PutLaunches(Json& j, const MegatronLaunch& megatron, const TorchTitanLaunch& torchtitan) {
  if (megatron.widths) {
    j["megatron"]["tensor"] = megatron.widths->tensor;
    j["megatron"]["context"] = megatron.widths->context;
    j["megatron"]["expert"] = megatron.widths->expert;
    j["megatron"]["expert_tensor"] = megatron.widths->expert_tensor;
    j["megatron"]["sequence_parallel"] = megatron.widths->sequence_parallel;
  }
  PutArgs(j, "megatron_args", megatron.args, megatron.why);
  if (!megatron.env.empty()) {
    Json env = Json::MakeArray();
    for (const std::string& e : megatron.env) env.Push(e);
    j["megatron_env"] = env;
  }
  PutArgs(j, "torchtitan_args", torchtitan.Args(), torchtitan.why);
  if (!torchtitan.settings.empty()) {
    j["torchtitan"]["tensor"] = torchtitan.tensor;
    j["torchtitan"]["context"] = torchtitan.context;
    j["torchtitan"]["expert"] = torchtitan.expert;
    j["torchtitan_toml"] = torchtitan.Toml();
  }
}

}  // namespace phaze::cli
