// Parses Prometheus text format with the reference parser of Python's
// prometheus_client (Debian's python3-prometheus-client), for tests: the
// text is written to a file and /usr/bin/python3 prints its samples as
// JSON. A text the parser refuses fails the call.
#ifndef TUNEFLEET_TESTS_SUPPORT_PROM_PARSE_H_
#define TUNEFLEET_TESTS_SUPPORT_PROM_PARSE_H_

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/command_runner.h"

namespace tunefleet::testing {

// One parsed sample.
struct PromSample {
  std::string family;  // the family's name as the parser reports it
  std::string type;    // "counter", "gauge", "histogram", ...
  std::string name;    // the sample's name (a histogram's _bucket, _count...)
  std::map<std::string, std::string> labels;
  double value = 0;
};

// Runs the parser on `text`; the samples in order, or ADD_FAILURE and an
// empty vector when the parser refuses the text.
inline std::vector<PromSample> ParsePrometheusText(const std::string& text) {
  static int counter = 0;
  const std::string path = ::testing::TempDir() + "/tf_metrics_" +
                           std::to_string(getpid()) + "_" +
                           std::to_string(counter++) + ".txt";
  {
    std::ofstream out(path, std::ios::binary);
    out << text;
  }
  const std::string script =
      "import json, sys\n"
      "from prometheus_client.parser import text_string_to_metric_families\n"
      "out = []\n"
      "for f in text_string_to_metric_families(open(sys.argv[1]).read()):\n"
      "  for s in f.samples:\n"
      "    out.append({'family': f.name, 'type': f.type, 'name': s.name,\n"
      "                'labels': s.labels, 'value': s.value})\n"
      "print(json.dumps(out))\n";
  const std::string script_path = path + ".py";
  {
    std::ofstream out(script_path, std::ios::binary);
    out << script;
  }
  const CommandResult r =
      RunCommand("/usr/bin/python3 " + script_path + " " + path);
  std::remove(path.c_str());
  std::remove(script_path.c_str());
  if (r.exit_code != 0) {
    ADD_FAILURE() << "prometheus_client refused the text: " << r.err << "\n"
                  << text;
    return {};
  }
  std::vector<PromSample> samples;
  for (const auto& j : nlohmann::json::parse(r.out)) {
    PromSample s;
    s.family = j.at("family").get<std::string>();
    s.type = j.at("type").get<std::string>();
    s.name = j.at("name").get<std::string>();
    s.labels = j.at("labels").get<std::map<std::string, std::string>>();
    s.value = j.at("value").get<double>();
    samples.push_back(std::move(s));
  }
  return samples;
}

// The value of the sample named `name` with exactly `labels`, or -1 when
// there is none.
inline double SampleValue(const std::vector<PromSample>& samples,
                          const std::string& name,
                          const std::map<std::string, std::string>& labels) {
  for (const PromSample& s : samples) {
    if (s.name == name && s.labels == labels) return s.value;
  }
  return -1;
}

// The type the parser gave the family `family`, or "" when absent.
inline std::string FamilyType(const std::vector<PromSample>& samples,
                              const std::string& family) {
  for (const PromSample& s : samples) {
    if (s.family == family) return s.type;
  }
  return "";
}

}  // namespace tunefleet::testing

#endif  // TUNEFLEET_TESTS_SUPPORT_PROM_PARSE_H_
