// json_error.cc — JSON string escaping for error bodies.
#include "junction/http/json_error.h"

namespace junction::http {

void AppendJsonError(std::string& out, std::string_view message) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.append("{\"error\":\"");
  for (char c : message) {
    unsigned char u = static_cast<unsigned char>(c);
    switch (c) {
      case '"':
        out.append("\\\"");
        break;
      case '\\':
        out.append("\\\\");
        break;
      case '\n':
        out.append("\\n");
        break;
      case '\r':
        out.append("\\r");
        break;
      case '\t':
        out.append("\\t");
        break;
      default:
        if (u < 0x20) {
          out.append("\\u00");
          out.push_back(kHex[u >> 4]);
          out.push_back(kHex[u & 0xf]);
        } else {
          out.push_back(c);
        }
    }
  }
  out.append("\"}");
}

void AppendErrorResponse(std::string& out, int status, std::string_view message,
                         const ResponseContext& context) {
  ResponseWriter w(out, context);
  w.Start(status);
  (void)w.AddHeader("Content-Type", "application/json");
  // Error path: the body is built in a scratch string first, so its length is known.
  std::string body;
  body.reserve(message.size() + 16);
  AppendJsonError(body, message);
  w.Finish(body);
}

}  // namespace junction::http
