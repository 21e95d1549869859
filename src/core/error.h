// Internal error reporting. Library code throws delegato::Error with a message
// that names what is wrong (file, subgraph, node index, op, tensor); the public
// API turns it into a Status at its boundary, and the CLI into a non-zero exit.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace delegato {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

template <class... Parts>
std::string StrCat(Parts&&... parts) {
  std::ostringstream out;
  (out << ... << std::forward<Parts>(parts));
  return out.str();
}

template <class... Parts>
[[noreturn]] void Fail(Parts&&... parts) {
  throw Error(StrCat(std::forward<Parts>(parts)...));
}

}  // namespace delegato

// DLG_CHECK(cond, message parts...): throws delegato::Error when cond is false.
#define DLG_CHECK(cond, ...)                      \
  do {                                            \
    if (!(cond)) ::delegato::Fail(__VA_ARGS__);   \
  } while (false)
