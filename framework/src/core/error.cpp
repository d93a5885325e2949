#include "phaze/core/error.hpp"

namespace phaze {

// Key functions: the vtables and type info of the exception types are emitted here only.
Error::~Error() = default;
UsageError::~UsageError() = default;
ConfigError::~ConfigError() = default;
PluginError::~PluginError() = default;
InvalidArgumentError::~InvalidArgumentError() = default;

}  // namespace phaze
