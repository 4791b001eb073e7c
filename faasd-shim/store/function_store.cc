// function_store.cc — name validation, NAME.so lookup and the load-once cache of FunctionStore.
#include "faasd-shim/store/function_store.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

namespace faasnode::store {

using junction::ErrorCode;
using junction::MakeError;
using junction::Status;

namespace {

constexpr std::size_t kMaxNameLength = 63;  // a DNS-1123 label (RFC 1123, 2.1)
constexpr std::string_view kSuffix = ".so";

bool IsLowerAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

}  // namespace

Status<std::unique_ptr<FunctionStore>> FunctionStore::Open(std::string directory) {
  std::error_code ec;
  if (!std::filesystem::is_directory(directory, ec)) {
    return MakeError(ErrorCode::kNotFound,
                     fmt::format("function store '{}' is not a directory; build the functions "
                                 "(cmake --build BUILD) or point the node at the folder that "
                                 "holds the NAME.so files",
                                 directory));
  }
  return std::unique_ptr<FunctionStore>(new FunctionStore(std::move(directory)));
}

Status<void> FunctionStore::ValidateName(std::string_view name) {
  auto bad = [&](std::string_view why) {
    // Quote at most 80 bytes, control bytes escaped: the name may be hostile.
    std::string shown;
    for (unsigned char c : name.substr(0, 80)) {
      if (c < 0x20 || c >= 0x7f) {
        shown += fmt::format("\\x{:02x}", c);
      } else {
        shown.push_back(static_cast<char>(c));
      }
    }
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("function name '{}' {}; a name is 1 to 63 characters of a-z, "
                                 "0-9 and '-', starting and ending with a letter or digit",
                                 shown, why));
  };
  if (name.empty()) return bad("is empty");
  if (name.size() > kMaxNameLength) return bad("is longer than 63 characters");
  if (name.find('/') != std::string_view::npos || name.find("..") != std::string_view::npos) {
    return bad("would leave the function store directory");
  }
  if (!std::ranges::all_of(name, [](char c) { return IsLowerAlnum(c) || c == '-'; })) {
    return bad("has a character other than a-z, 0-9 and '-'");
  }
  if (name.front() == '-' || name.back() == '-') return bad("starts or ends with '-'");
  return {};
}

Status<std::string> FunctionStore::PathOf(std::string_view name) const {
  if (auto ok = ValidateName(name); !ok) return std::unexpected(ok.error());
  std::string path = directory_;
  if (path.empty() || path.back() != '/') path.push_back('/');
  path.append(name).append(kSuffix);
  return path;
}

Status<std::shared_ptr<const NativeFunction>> FunctionStore::Load(std::string_view name) {
  auto path = PathOf(name);
  if (!path) return std::unexpected(path.error());
  {
    std::lock_guard lock(mu_);
    if (auto it = loaded_.find(name); it != loaded_.end()) return it->second;
  }
  auto fn = NativeFunction::Load(*path);
  if (!fn) return std::unexpected(fn.error());
  if (fn->name() != name) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("{}: the object calls itself '{}', not '{}'; rename the file or "
                                 "fix the name in FAASNODE_EXPORT_FUNCTION",
                                 *path, fn->name(), name));
  }
  auto shared = std::make_shared<const NativeFunction>(std::move(*fn));
  std::lock_guard lock(mu_);
  // A concurrent Load may have won: keep the first (the same dlopen handle either way).
  auto [it, inserted] = loaded_.try_emplace(std::string(name), std::move(shared));
  return it->second;
}

Status<std::vector<std::string>> FunctionStore::List() const {
  std::error_code ec;
  std::vector<std::string> names;
  std::filesystem::directory_iterator it(directory_, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    std::string file = it->path().filename().string();
    if (!file.ends_with(kSuffix)) continue;
    std::string name = file.substr(0, file.size() - kSuffix.size());
    if (ValidateName(name)) names.push_back(std::move(name));
  }
  if (ec) {
    return std::unexpected(junction::Error(
        ErrorCode::kIo, fmt::format("function store '{}': {}", directory_, ec.message()),
        ec.value()));
  }
  std::ranges::sort(names);
  return names;
}

}  // namespace faasnode::store
