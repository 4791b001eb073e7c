// status_codes.h — HTTP status codes the node answers with, and their reason phrases.
//
// Codes are plain ints (any 100..999 may appear on the wire); the named constants are the ones
// junction and the shim use. Reason phrases are those of RFC 9110 section 15.
#pragma once

#include <string_view>

namespace junction::http {

inline constexpr int kStatusContinue = 100;
inline constexpr int kStatusSwitchingProtocols = 101;
inline constexpr int kStatusOk = 200;
inline constexpr int kStatusCreated = 201;
inline constexpr int kStatusAccepted = 202;
inline constexpr int kStatusNoContent = 204;
inline constexpr int kStatusMovedPermanently = 301;
inline constexpr int kStatusFound = 302;
inline constexpr int kStatusNotModified = 304;
inline constexpr int kStatusBadRequest = 400;
inline constexpr int kStatusUnauthorized = 401;
inline constexpr int kStatusForbidden = 403;
inline constexpr int kStatusNotFound = 404;
inline constexpr int kStatusMethodNotAllowed = 405;
inline constexpr int kStatusRequestTimeout = 408;
inline constexpr int kStatusConflict = 409;
inline constexpr int kStatusLengthRequired = 411;
inline constexpr int kStatusContentTooLarge = 413;  // "Payload Too Large" before RFC 9110
inline constexpr int kStatusUriTooLong = 414;
inline constexpr int kStatusUnsupportedMediaType = 415;
inline constexpr int kStatusExpectationFailed = 417;
inline constexpr int kStatusTooManyRequests = 429;
inline constexpr int kStatusRequestHeaderFieldsTooLarge = 431;
inline constexpr int kStatusInternalServerError = 500;
inline constexpr int kStatusNotImplemented = 501;
inline constexpr int kStatusBadGateway = 502;
inline constexpr int kStatusServiceUnavailable = 503;
inline constexpr int kStatusGatewayTimeout = 504;
inline constexpr int kStatusHttpVersionNotSupported = 505;

// The reason phrase for `status` ("Not Found" for 404), or "" for a code RFC 9110 does not
// name (a status line may carry an empty reason). The view refers to static storage.
std::string_view ReasonPhrase(int status);

// True when a response with this status never has a body, whatever the request:
// 1xx, 204 and 304 (RFC 9110 section 6.4.1).
constexpr bool StatusHasNoBody(int status) {
  return (status >= 100 && status < 200) || status == 204 || status == 304;
}

}  // namespace junction::http
