// native_function.cc — dlopen, descriptor lookup and the ABI checks of NativeFunction::Load.
#include "faasd-shim/store/native_function.h"

#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>

#include <cstring>
#include <utility>

#include <fmt/format.h>

namespace faasnode::store {

using junction::ErrorCode;
using junction::MakeError;
using junction::Status;

namespace {

constexpr std::string_view kRebuildHint = "rebuild it against functions/sdk";

// The fixed prefix every descriptor version starts with (function_abi.h, Versioning).
struct DescriptorPrefix {
  std::uint32_t abi_version;
  std::uint32_t struct_size;
};

}  // namespace

Status<NativeFunction> NativeFunction::Load(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    int err = errno;
    if (err == ENOENT || err == ENOTDIR) {
      return MakeError(ErrorCode::kNotFound,
                       fmt::format("{}: no such function object; build it (faasnode_function in "
                                   "functions/sdk) or check the function store directory",
                                   path));
    }
    return std::unexpected(junction::Error::FromErrno(fmt::format("{}: stat", path), err));
  }
  if (!S_ISREG(st.st_mode)) {
    return MakeError(
        ErrorCode::kInvalidArgument,
        fmt::format("{}: not a regular file; a function is a shared object (.so)", path));
  }

  ::dlerror();  // clear any stale message
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("{}: cannot load: {}; a function must be a shared object built "
                                 "with faasnode_function (functions/sdk) for this machine",
                                 path, why != nullptr ? why : "unknown dlopen error"));
  }
  auto fail = [&](std::string message) {
    ::dlclose(handle);
    return MakeError(ErrorCode::kInvalidArgument, std::move(message));
  };

  ::dlerror();
  void* sym = ::dlsym(handle, FAASNODE_FUNCTION_SYMBOL);
  if (sym == nullptr) {
    return fail(
        fmt::format("{}: exports no '{}' descriptor, so it is not a faasnode function; "
                    "export one with FAASNODE_EXPORT_FUNCTION (faasnode/function.h) and {}",
                    path, FAASNODE_FUNCTION_SYMBOL, kRebuildHint));
  }

  // The symbol must be data at least as large as the frozen prefix before anything is read.
  Dl_info info;
  void* extra = nullptr;
  int found = ::dladdr1(sym, &info, &extra, RTLD_DL_SYMENT);
  const auto* entry = static_cast<const ElfW(Sym)*>(extra);
  if (found != 0 && entry != nullptr &&
      (ELF64_ST_TYPE(entry->st_info) != STT_OBJECT || entry->st_size < sizeof(DescriptorPrefix))) {
    return fail(fmt::format(
        "{}: '{}' is not a descriptor (a {}-byte {}); export it with "
        "FAASNODE_EXPORT_FUNCTION and {}",
        path, FAASNODE_FUNCTION_SYMBOL, entry->st_size,
        ELF64_ST_TYPE(entry->st_info) == STT_FUNC ? "function" : "symbol", kRebuildHint));
  }
  // Only the frozen prefix may be read before the version is known to match.
  const auto* prefix = static_cast<const DescriptorPrefix*>(sym);
  // Every version in [MIN, current] shares the descriptor's layout; later ones only append
  // to the host table, which an older object never reads past.
  if (prefix->abi_version < FAASNODE_ABI_MIN_VERSION ||
      prefix->abi_version > FAASNODE_ABI_VERSION) {
    return fail(fmt::format("{}: built against SDK ABI v{}; this node speaks v{} to v{}: {}", path,
                            prefix->abi_version, FAASNODE_ABI_MIN_VERSION, FAASNODE_ABI_VERSION,
                            kRebuildHint));
  }
  if (prefix->struct_size < sizeof(faasnode_function_descriptor)) {
    return fail(fmt::format("{}: its ABI v{} descriptor is {} bytes, v{} needs {}: {}", path,
                            prefix->abi_version, prefix->struct_size, FAASNODE_ABI_VERSION,
                            sizeof(faasnode_function_descriptor), kRebuildHint));
  }
  const auto* d = static_cast<const faasnode_function_descriptor*>(sym);
  if (d->name == nullptr || d->name[0] == '\0') {
    return fail(
        fmt::format("{}: its descriptor has no name; pass one to FAASNODE_EXPORT_FUNCTION", path));
  }
  const char* missing = d->init == nullptr     ? "init"
                        : d->handle == nullptr ? "handle"
                        : d->fini == nullptr   ? "fini"
                                               : nullptr;
  if (missing != nullptr) {
    return fail(
        fmt::format("{}: function '{}' has a null {} callback; init, handle and fini are "
                    "all required (FAASNODE_EXPORT_FUNCTION provides them)",
                    path, d->name, missing));
  }
  return NativeFunction(handle, d, path);
}

NativeFunction::NativeFunction(NativeFunction&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)),
      descriptor_(std::exchange(other.descriptor_, nullptr)),
      path_(std::move(other.path_)) {}

NativeFunction& NativeFunction::operator=(NativeFunction&& other) noexcept {
  if (this != &other) {
    if (handle_ != nullptr) ::dlclose(handle_);
    handle_ = std::exchange(other.handle_, nullptr);
    descriptor_ = std::exchange(other.descriptor_, nullptr);
    path_ = std::move(other.path_);
  }
  return *this;
}

NativeFunction::~NativeFunction() {
  if (handle_ != nullptr) ::dlclose(handle_);
}

}  // namespace faasnode::store
