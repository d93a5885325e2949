// Plugin loading and the registry, against the fixture plugins in tests/fixtures/: each failure
// mode produces its documented message.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "phaze/core/error.hpp"
#include "phaze/ilp/solver_backend.hpp"
#include "phaze/plugin/plugin_abi.hpp"
#include "phaze/plugin/plugin_loader.hpp"
#include "phaze/version.hpp"
#include "phaze/plugin/registry.hpp"
#include "test_util.hpp"
#include "test_paths.hpp"

namespace phaze {
namespace {

const std::string kFixtures = PHAZE_FIXTURE_DIR;
std::string Fixture(const std::string& name) { return kFixtures + "/" + name + ".so"; }

std::string LoadError(const std::vector<std::string>& names) {
  Registry registry;
  try {
    for (const auto& n : names) PluginLoader::Load(Fixture(n), registry);
  } catch (const PluginError& e) {
    return e.what();
  }
  return "<no PluginError>";
}

ConfigNode NoParams() { return ConfigNode::EmptyMap("test", "solver.params"); }

TEST(PluginLoader, GoodPluginRegistersItsComponentWithOrigin) {
  Registry registry;
  PluginLoader::Load(Fixture("good"), registry);
  ASSERT_EQ(registry.Plugins().size(), 1u);
  EXPECT_EQ(registry.Plugins()[0].name, "fixture-good");
  EXPECT_EQ(registry.Plugins()[0].version, "2.3.4");
  EXPECT_EQ(registry.Plugins()[0].file, Fixture("good"));
  EXPECT_EQ(registry.Names(ComponentKind::kSolverBackend), std::vector<std::string>{"fixture-solver"});
  auto components = registry.Components();
  ASSERT_EQ(components.size(), 1u);
  EXPECT_EQ(components[0].plugin.name, "fixture-good");
  auto backend = registry.CreateSolverBackend("fixture-solver", NoParams());
  EXPECT_EQ(backend->Name(), "fixture-solver");
}

TEST(PluginLoader, ObjectsKeepTheirLibraryLoaded) {
  std::shared_ptr<SolverBackend> backend;
  {
    Registry registry;
    PluginLoader::Load(Fixture("good"), registry);
    backend = registry.CreateSolverBackend("fixture-solver", NoParams());
  }  // registry (and its handle on the library) gone
  // The vtable and code of the object live in the plugin: calling it proves it is still mapped.
  EXPECT_EQ(backend->Name(), "fixture-solver");
  IlpModel model;
  model.AddBinary("x");  // a variable: the backend itself is called
  EXPECT_EQ(backend->Solve(model, SolveOptions()).detail, "fixture backend does not solve");
}

TEST(PluginLoader, NoEntrySymbol) {
  EXPECT_EQ(LoadError({"no_entry"}),
            "plugin '" + Fixture("no_entry") +
                "': not a Phaze plugin: it does not export the entry symbol 'phaze_plugin_handshake' "
                "(define it with PHAZE_PLUGIN_ENTRY(fn) from phaze/plugin/plugin_abi.hpp)");
}

TEST(PluginLoader, WrongAbiVersion) {
  EXPECT_EQ(LoadError({"wrong_abi"}),
            "plugin '" + Fixture("wrong_abi") +
                "': wrong plugin ABI version: got 999, this phaze supports " +
                std::to_string(plugin::kAbiVersion) + " (rebuild the plugin against this phaze)");
}

// A plugin compiled against other headers is refused before anything past the handshake is used,
// and one of the old ABI (an entry returning a struct by value) without even being called.
TEST(PluginLoader, OtherHeadersAndOldAbiAreRefused) {
  EXPECT_EQ(LoadError({"other_headers"}),
            "plugin '" + Fixture("other_headers") +
                "': built against other phaze headers (fingerprint '0.0.0-0123456789abcdef', this "
                "phaze '" + std::string(kBuildFingerprint) +
                "'): rebuild the plugin against this phaze's headers");
  EXPECT_EQ(LoadError({"old_abi"}),
            "plugin '" + Fixture("old_abi") +
                "': built for an older phaze plugin ABI (3 or earlier: it exports "
                "'phaze_plugin_entry'); this phaze supports ABI " +
                std::to_string(plugin::kAbiVersion) + " (rebuild the plugin against this phaze)");
  // The fingerprint is the version and 16 hex digits of the headers' hash.
  const std::string f = kBuildFingerprint;
  ASSERT_GT(f.size(), 17u);
  EXPECT_EQ(f.substr(0, f.size() - 17), kVersion);
  EXPECT_EQ(f.find_first_not_of("0123456789abcdef", f.size() - 16), std::string::npos) << f;
}

// Files that are not plugins are refused with a message, never a crash: a null entry is not
// called, anything the entry or the registration throws is caught, and a file that is not a
// complete ELF shared object never reaches dlopen (a truncated one would SIGBUS inside it).
TEST(PluginLoader, NotPluginsAreRefusedNotCrashed) {
  EXPECT_EQ(LoadError({"null_entry"}),
            "plugin '" + Fixture("null_entry") +
                "': not a Phaze plugin: its entry symbol 'phaze_plugin_handshake' is a null pointer");
  EXPECT_EQ(LoadError({"entry_throws_int"}),
            "plugin '" + Fixture("entry_throws_int") +
                "': the entry function threw something that is not a std::exception");
  EXPECT_EQ(LoadError({"register_throws_int"}),
            "plugin 'fixture-register-throws' (" + Fixture("register_throws_int") +
                ") failed while registering its components: it threw something that is not a "
                "std::exception");
  testing::TempDir dir;
  auto load = [](const std::filesystem::path& file) -> std::string {
    Registry registry;
    try {
      PluginLoader::Load(file, registry);
    } catch (const PluginError& e) {
      return e.what();
    }
    return "<no PluginError>";
  };
  testing::WriteFile(dir / "text.so", "not a shared object\n");
  EXPECT_EQ(load(dir / "text.so"),
            "plugin '" + (dir / "text.so").string() + "': cannot load: not a shared object (no ELF header)");
  // The good fixture cut at 1/2, 1/4 and just past its ELF header.
  std::ifstream in(Fixture("good"), std::ios::binary);
  const std::string whole((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(whole.size(), 4096u);
  for (std::size_t cut : {whole.size() / 2, whole.size() / 4, std::size_t{80}}) {
    const auto file = dir / ("cut" + std::to_string(cut) + ".so");
    std::ofstream(file, std::ios::binary).write(whole.data(), static_cast<std::streamsize>(cut));
    const std::string msg = load(file);
    EXPECT_EQ(msg.rfind("plugin '" + file.string() + "': cannot load: truncated (" +
                            std::to_string(cut) + " bytes): ",
                        0),
              0u)
        << msg;
  }
  // The whole file, copied, still loads.
  const auto copy = dir / "whole.so";
  std::ofstream(copy, std::ios::binary).write(whole.data(), static_cast<std::streamsize>(whole.size()));
  Registry registry;
  EXPECT_NO_THROW(PluginLoader::Load(copy, registry));
}

TEST(PluginLoader, DuplicateNameNamesBothFiles) {
  EXPECT_EQ(LoadError({"dup_a", "dup_b"}),
            "duplicate solver backend 'fixture-dup': registered by " + Fixture("dup_a") +
                " and by " + Fixture("dup_b"));
}

TEST(PluginLoader, UndefinedSymbolReportsTheRealDlerror) {
  std::string msg = LoadError({"undefined_symbol"});
  EXPECT_EQ(msg.rfind("plugin '" + Fixture("undefined_symbol") + "': cannot load: ", 0), 0u) << msg;
  EXPECT_NE(msg.find("undefined symbol: phaze_fixture_missing_function"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("Bad file descriptor"), std::string::npos) << msg;
}

TEST(PluginLoader, MissingFileIsReportedNotCrashed) {
  Registry registry;
  try {
    PluginLoader::Load(kFixtures + "/absent.so", registry);
    FAIL();
  } catch (const PluginError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot load: " + kFixtures + "/absent.so: cannot open shared object file"),
              std::string::npos)
        << e.what();
  }
}

TEST(Registry, FactoryThatThrowsNamesPluginAndFile) {
  Registry registry;
  PluginLoader::Load(Fixture("throwing_factory"), registry);
  try {
    registry.CreateSolverBackend("fixture-throwing", NoParams());
    FAIL();
  } catch (const PluginError& e) {
    EXPECT_EQ(std::string(e.what()),
              "solver backend 'fixture-throwing' from plugin 'fixture-throws' (" +
                  Fixture("throwing_factory") +
                  ") failed to construct: boom from the fixture factory");
  }
}

TEST(Registry, PluginParamsErrorsAreLocatedLikeTheHosts) {
  Registry registry;
  PluginLoader::Load(Fixture("good"), registry);
  auto params = ConfigNode::ParseString("solver:\n  params:\n    lable: x\n", "run.yaml")
                    .Child("solver")
                    .Child("params");
  try {
    registry.CreateSolverBackend("fixture-solver", params);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              "run.yaml:3:5: solver.params.lable: unknown key 'lable'; did you mean 'label'? "
              "(allowed keys: label)");
  }
}

TEST(Registry, UnknownNameListsRegisteredNamesSorted) {
  Registry registry;
  RegisterBuiltin(registry, "builtins", "1", "", [](Registry& r) {
    r.AddSolverBackend("zeta", "", [](const ConfigNode&) { return nullptr; });
    r.AddSolverBackend("alpha", "", [](const ConfigNode&) { return nullptr; });
  });
  try {
    registry.CreateSolverBackend("gurobi", NoParams());
    FAIL();
  } catch (const PluginError& e) {
    EXPECT_EQ(std::string(e.what()), "no solver backend named 'gurobi'; registered: alpha, zeta");
  }
  EXPECT_EQ(registry.Plugins()[0].file, "<built-in>");
}

TEST(Registry, RegistrationIsTransactional) {
  Registry registry;
  RegisterBuiltin(registry, "first", "1", "", [](Registry& r) {
    r.AddSolverBackend("taken", "", [](const ConfigNode&) { return nullptr; });
  });
  EXPECT_THROW(RegisterBuiltin(registry, "second", "1", "",
                               [](Registry& r) {
                                 r.AddSolverBackend("fresh", "", [](const ConfigNode&) { return nullptr; });
                                 r.AddSolverBackend("taken", "", [](const ConfigNode&) { return nullptr; });
                               }),
               PluginError);
  EXPECT_EQ(registry.Names(ComponentKind::kSolverBackend), std::vector<std::string>{"taken"});
  EXPECT_EQ(registry.Plugins().size(), 1u);
}

TEST(PluginLoader, DiscoveryIsSortedAndDeduplicated) {
  testing::TempDir dir;
  PluginSources s;
  s.files = {Fixture("wrong_abi"), Fixture("good")};
  s.directories = {};
  s.env_path = Fixture("good") + ":" + Fixture("dup_a");
  s.use_default_directory = false;
  auto files = PluginLoader::Discover(s);
  ASSERT_EQ(files.size(), 3u);
  EXPECT_EQ(files[0].filename(), "dup_a.so");
  EXPECT_EQ(files[1].filename(), "good.so");
  EXPECT_EQ(files[2].filename(), "wrong_abi.so");
  s.directories = {(dir / "nope").string()};
  EXPECT_THROW(PluginLoader::Discover(s), PluginError);
}

}  // namespace
}  // namespace phaze
