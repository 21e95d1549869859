#include "tools/flags.h"

#include <cerrno>
#include <cstdlib>
#include <sstream>

namespace delegato::tools {

Flags& Flags::Declare(const std::string& name, const std::string& help, bool is_bool,
                      bool repeated) {
  specs_[name] = Spec{help, is_bool, repeated};
  order_.push_back(name);
  return *this;
}

std::string Flags::Help() const {
  std::ostringstream out;
  for (const std::string& name : order_) {
    const Spec& spec = specs_.at(name);
    out << "  --" << name << (spec.is_bool ? "" : "=VALUE") << "\n      " << spec.help << "\n";
  }
  return out.str();
}

void Flags::Parse(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.size() < 2 || arg[0] != '-') {
      positional_.push_back(arg);
      continue;
    }
    std::string body = arg.substr(arg[1] == '-' ? 2 : 1);
    std::string name = body, value;
    bool has_value = false;
    if (size_t eq = body.find('='); eq != std::string::npos) {
      name = body.substr(0, eq);
      value = body.substr(eq + 1);
      has_value = true;
    }
    auto spec = specs_.find(name);
    if (spec == specs_.end())
      throw UsageError("unknown flag '" + arg + "'. Valid flags:\n" + Help());
    if (!has_value) {
      if (spec->second.is_bool) {
        value = "true";
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        throw UsageError("flag --" + name + " needs a value");
      }
    }
    if (!spec->second.repeated && values_.count(name))
      throw UsageError("flag --" + name + " given more than once");
    values_[name].push_back(value);
  }
}

std::string Flags::GetString(const std::string& name, const std::string& fallback) const {
  auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second.back();
}

std::vector<std::string> Flags::GetAll(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

int64_t Flags::GetInt(const std::string& name, int64_t fallback, int64_t min, int64_t max) const {
  if (!Has(name)) return fallback;
  const std::string text = GetString(name);
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE)
    throw UsageError("flag --" + name + "='" + text + "' is not an integer");
  if (v < min || v > max)
    throw UsageError("flag --" + name + "=" + text + " is out of range [" + std::to_string(min) +
                     ", " + std::to_string(max) + "]");
  return v;
}

double Flags::GetDouble(const std::string& name, double fallback) const {
  if (!Has(name)) return fallback;
  const std::string text = GetString(name);
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0') throw UsageError("flag --" + name + "='" + text + "' is not a number");
  return v;
}

bool Flags::GetBool(const std::string& name, bool fallback) const {
  if (!Has(name)) return fallback;
  const std::string v = GetString(name);
  if (v == "true" || v == "1") return true;
  if (v == "false" || v == "0") return false;
  throw UsageError("flag --" + name + "='" + v + "' must be true or false");
}

}  // namespace delegato::tools
