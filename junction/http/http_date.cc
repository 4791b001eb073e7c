// http_date.cc — IMF-fixdate formatting without locale or allocation.
#include "junction/http/http_date.h"

namespace junction::http {
namespace {

void Put2(char* p, int v) {
  p[0] = char('0' + v / 10);
  p[1] = char('0' + v % 10);
}

}  // namespace

std::string_view FormatHttpDate(std::time_t t, char* out) {
  static constexpr char kDays[7][4] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static constexpr char kMonths[12][4] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                          "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  std::tm tm{};
  gmtime_r(&t, &tm);
  char* p = out;
  for (int i = 0; i < 3; ++i) *p++ = kDays[tm.tm_wday][i];
  *p++ = ',';
  *p++ = ' ';
  Put2(p, tm.tm_mday), p += 2;
  *p++ = ' ';
  for (int i = 0; i < 3; ++i) *p++ = kMonths[tm.tm_mon][i];
  *p++ = ' ';
  int year = tm.tm_year + 1900;
  Put2(p, (year / 100) % 100), Put2(p + 2, year % 100), p += 4;
  *p++ = ' ';
  Put2(p, tm.tm_hour), p += 2;
  *p++ = ':';
  Put2(p, tm.tm_min), p += 2;
  *p++ = ':';
  Put2(p, tm.tm_sec), p += 2;
  *p++ = ' ';
  *p++ = 'G', *p++ = 'M', *p++ = 'T';
  return {out, std::size_t(p - out)};
}

std::string_view CachedHttpDate(std::time_t t) {
  thread_local std::time_t cached_second = -1;
  thread_local char cached[kHttpDateLength];
  if (t != cached_second) {
    FormatHttpDate(t, cached);
    cached_second = t;
  }
  return {cached, kHttpDateLength};
}

}  // namespace junction::http
