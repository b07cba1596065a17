// The dependency rule of docs/ARCHITECTURE.md, read from the folders
// themselves: every library folder (a `tunefleet_folder` line of
// cmake/Components.cmake) may include headers of its own and of the folders
// whose libraries its CMakeLists.txt links, directly or through them; the
// folders' link graph has no cycle. Nothing here lists a rule by hand: a
// new dependency is a line in a folder's CMakeLists.txt, and an include
// that no link allows fails.
//
//   cmake/Components.cmake --folders--> Layering <--links--
//   <folder>/CMakeLists.txt
//                                         |
//          sources (.h, .cc) --includes-->+--> Cycles(), CheckIncludes()
#ifndef TUNEFLEET_TESTS_UNIT_ARCHITECTURE_LAYERING_H_
#define TUNEFLEET_TESTS_UNIT_ARCHITECTURE_LAYERING_H_

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace tunefleet::architecture {

// The text of the files the rule is read from, by path from the repository
// root: cmake/Components.cmake, every CMakeLists.txt under a library folder
// and every .h and .cc there.
using Tree = std::map<std::string, std::string>;

// Reads the tree at `root`; files of emitter/runtime/ (copied into emitted
// libraries, never linked here) are left out. Empty when `root` has no
// cmake/Components.cmake.
Tree ReadTree(const std::filesystem::path& root);

struct Layering {
  // The library folders, in Components.cmake's order.
  std::vector<std::string> folders;
  // Folder -> the other folders whose targets its targets link.
  std::map<std::string, std::set<std::string>> uses;
  // What the CMake files link that no folder defines (a typo, or a target
  // defined outside the library folders): "folder: target".
  std::vector<std::string> unknown_links;
};

// The folders and their links: targets are what add_library,
// add_executable and tunefleet_proto_library define in a folder's CMake
// files; links are the tunefleet targets named by target_link_libraries
// and by tunefleet_proto_library's DEPS.
Layering ReadLayering(const Tree& tree);

// Each cycle of the folder graph once, as "a -> b -> a"; empty when the
// folders are layered.
std::vector<std::string> Cycles(const Layering& layering);

// The includes of every source of a library folder, checked: an include of
// a library folder's header from a file of a folder that neither is it nor
// uses it (directly or not) is a violation, as
// "path:line (folder) includes header (folder)". Headers outside the
// library folders (third-party) are not checked; generated contract
// headers (tunefleet/v1/) belong to proto.
struct IncludeCheck {
  int checked = 0;  // includes of library headers looked at
  std::vector<std::string> violations;
};
IncludeCheck CheckIncludes(const Tree& tree, const Layering& layering);

// One row of docs/ARCHITECTURE.md's table of folders:
// | level | `folder/` | libraries | what it holds | uses |
struct TableRow {
  int level = 0;
  std::string folder;
  // The words of the "uses" column (folder names and third-party names).
  std::set<std::string> uses;
};

// The table's rows, in order.
std::vector<TableRow> ArchitectureTable(const std::string& markdown);

}  // namespace tunefleet::architecture

#endif  // TUNEFLEET_TESTS_UNIT_ARCHITECTURE_LAYERING_H_
