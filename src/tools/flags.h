// Command-line flags in TFLite tools' style: `--name=value` or `--name value`,
// booleans as `--name`, `--name=true|false|1|0`. Every flag must be declared;
// an unknown or malformed one is a usage error that lists the valid flags.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace delegato::tools {

class UsageError : public std::exception {
 public:
  explicit UsageError(std::string message) : message_(std::move(message)) {}
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  std::string message_;
};

class Flags {
 public:
  // Declares a flag. `is_bool` flags may omit their value; `repeated` flags
  // may be given several times (see GetAll).
  Flags& Declare(const std::string& name, const std::string& help, bool is_bool = false,
                 bool repeated = false);
  // Parses args; positional arguments are collected. Throws UsageError.
  void Parse(const std::vector<std::string>& args);

  bool Has(const std::string& name) const { return values_.count(name) > 0; }
  std::string GetString(const std::string& name, const std::string& fallback = "") const;
  std::vector<std::string> GetAll(const std::string& name) const;
  int64_t GetInt(const std::string& name, int64_t fallback, int64_t min, int64_t max) const;
  double GetDouble(const std::string& name, double fallback) const;
  bool GetBool(const std::string& name, bool fallback = false) const;
  const std::vector<std::string>& positional() const { return positional_; }

  std::string Help() const;

 private:
  struct Spec {
    std::string help;
    bool is_bool;
    bool repeated;
  };
  std::map<std::string, Spec> specs_;
  std::vector<std::string> order_;
  std::map<std::string, std::vector<std::string>> values_;
  std::vector<std::string> positional_;
};

}  // namespace delegato::tools
