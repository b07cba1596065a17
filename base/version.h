// The build's version, as every binary's --version prints it and the agent
// reports it in Hello.agent_version. One number for the whole project: the
// top-level CMakeLists.txt's project(VERSION).
#ifndef TUNEFLEET_BASE_VERSION_H_
#define TUNEFLEET_BASE_VERSION_H_

namespace tunefleet::base {

// "MAJOR.MINOR.PATCH", e.g. "0.1.0".
inline constexpr char kVersion[] = TUNEFLEET_VERSION;

}  // namespace tunefleet::base

#endif  // TUNEFLEET_BASE_VERSION_H_
