// native_function.h — a native function shared object, loaded and checked against the SDK's C ABI.
//
//   auto fn = NativeFunction::Load("/srv/functions/echo.so");
//   if (!fn) { log(fn.error().message()); return; }   // one line: what and how to fix it
//   const faasnode_function_descriptor& d = fn->descriptor();
//
// Load dlopen()s the object (RTLD_NOW | RTLD_LOCAL: every symbol is resolved up front, none
// leaks into other functions), finds FAASNODE_FUNCTION_SYMBOL and refuses the object unless
// its descriptor speaks an ABI version this node loads (FAASNODE_ABI_MIN_VERSION to
// FAASNODE_ABI_VERSION), covers that version's fields, has
// a name and has all three callbacks. A NativeFunction is move-only and dlclose()s on
// destruction: keep it alive (Instance holds a shared_ptr) while any instance of it exists.
//
// Blocking: Load blocks the calling kthread (file I/O, relocation, the object's static
// constructors) — call it at start-up or on a cold path, never in a loop on the data path.
// Thread-safety: Load may be called from any thread; a loaded NativeFunction is immutable.
#pragma once

#include <string>
#include <string_view>

#include "faasnode/function_abi.h"
#include "junction/base/error.h"

namespace faasnode::store {

class NativeFunction {
 public:
  // Errors: kNotFound (no file at `path`), kInvalidArgument (not a loadable shared object, no
  // descriptor symbol, a descriptor this node cannot use), each naming `path`.
  [[nodiscard]] static junction::Status<NativeFunction> Load(const std::string& path);

  NativeFunction(NativeFunction&& other) noexcept;
  NativeFunction& operator=(NativeFunction&& other) noexcept;
  NativeFunction(const NativeFunction&) = delete;
  NativeFunction& operator=(const NativeFunction&) = delete;
  ~NativeFunction();

  // The descriptor's name (static storage inside the object).
  std::string_view name() const { return descriptor_->name; }
  const std::string& path() const { return path_; }
  // Valid while this object lives.
  const faasnode_function_descriptor& descriptor() const { return *descriptor_; }

 private:
  NativeFunction(void* handle, const faasnode_function_descriptor* descriptor, std::string path)
      : handle_(handle), descriptor_(descriptor), path_(std::move(path)) {}

  void* handle_ = nullptr;  // from dlopen; null once moved from
  const faasnode_function_descriptor* descriptor_ = nullptr;
  std::string path_;
};

}  // namespace faasnode::store
