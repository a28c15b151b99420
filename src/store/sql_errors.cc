#include "store/sql_errors.h"

namespace quick::store {

std::string primary_message(const std::exception& error) {
  std::string text = error.what();
  const auto line_end = text.find('\n');
  if (line_end != std::string::npos) text.resize(line_end);
  for (const char* prefix : {"ERROR:  ", "FATAL:  "}) {
    const std::string p = prefix;
    if (text.compare(0, p.size(), p) == 0) text.erase(0, p.size());
  }
  return text;
}

}  // namespace quick::store
