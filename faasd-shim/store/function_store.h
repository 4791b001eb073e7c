// function_store.h — the node's native functions: NAME -> DIR/NAME.so, loaded once and shared.
//
//   auto store = FunctionStore::Open(FAASNODE_FUNCTIONS_DIR);   // the build's functions/
//   auto echo = (*store)->Load("echo");   // Status<std::shared_ptr<const NativeFunction>>
//
// Names are OpenFaaS function names (a DNS-1123 label: a-z, 0-9 and '-', 1..63 characters,
// starting and ending with a letter or digit), so a name can never leave the directory
// ('..', '/', NUL and the like are refused before any file is touched). A loaded object must
// call itself by the name it is stored under.
//
// Thread-safety: every method may be called from any thread or uthread concurrently. Load
// blocks the calling kthread while it loads an object for the first time (see
// NativeFunction::Load): warm functions up at start-up, not on the data path. A loaded function
// stays loaded while the store, or any instance of it, lives.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "faasd-shim/store/native_function.h"
#include "junction/base/error.h"

namespace faasnode::store {

class FunctionStore {
 public:
  // Errors: kNotFound when `directory` is not an existing directory.
  [[nodiscard]] static junction::Status<std::unique_ptr<FunctionStore>> Open(std::string directory);

  // Whether `name` is a valid function name; the error says which rule it breaks.
  [[nodiscard]] static junction::Status<void> ValidateName(std::string_view name);

  // DIR/NAME.so for a valid name (the file need not exist). Errors: ValidateName's.
  [[nodiscard]] junction::Status<std::string> PathOf(std::string_view name) const;

  // The loaded function, from the cache or loaded now. Errors: ValidateName's;
  // NativeFunction::Load's; kInvalidArgument when the object's descriptor names another
  // function. Failures are not cached (a fixed object is picked up on the next call).
  [[nodiscard]] junction::Status<std::shared_ptr<const NativeFunction>> Load(std::string_view name);

  // The names of the *.so files in the directory that are valid names, sorted. Loads nothing.
  // Errors: kIo when the directory cannot be read.
  [[nodiscard]] junction::Status<std::vector<std::string>> List() const;

  const std::string& directory() const { return directory_; }

 private:
  explicit FunctionStore(std::string directory) : directory_(std::move(directory)) {}

  const std::string directory_;
  std::mutex mu_;  // guards loaded_; never held while loading
  std::map<std::string, std::shared_ptr<const NativeFunction>, std::less<>> loaded_;
};

}  // namespace faasnode::store
