#include "tests/unit/architecture/layering.h"

#include <algorithm>
#include <fstream>
#include <functional>
#include <regex>
#include <sstream>

namespace tunefleet::architecture {
namespace {

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> Words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> words;
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

// CMake text without its comments (no CMake file here has '#' in a string).
std::string WithoutComments(const std::string& cmake) {
  std::istringstream in(cmake);
  std::string out;
  for (std::string line; std::getline(in, line);) {
    out += line.substr(0, line.find('#'));
    out += '\n';
  }
  return out;
}

// The folders of Components.cmake's `tunefleet_folder(<folder> FOR ...)`.
std::vector<std::string> ComponentFolders(const std::string& components) {
  static const std::regex folder(R"re(tunefleet_folder\(\s*([A-Za-z0-9_]+))re");
  std::vector<std::string> folders;
  const std::string text = WithoutComments(components);
  for (auto it = std::sregex_iterator(text.begin(), text.end(), folder);
       it != std::sregex_iterator(); ++it) {
    folders.push_back((*it)[1].str());
  }
  return folders;
}

// The first path component of `path`, "" when it has none.
std::string FirstComponent(const std::string& path) {
  const size_t slash = path.find('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

// The library folder `path` (a repository path or an include) belongs to,
// or "" for none.
std::string FolderOf(const std::string& path, const Layering& layering) {
  if (path.rfind("tunefleet/v1/", 0) == 0) return "proto";
  const std::string first = FirstComponent(path);
  const auto& folders = layering.folders;
  return std::find(folders.begin(), folders.end(), first) == folders.end()
             ? ""
             : first;
}

bool IsTunefleetTarget(const std::string& word) {
  static const std::regex target(R"re(tunefleet([_-][A-Za-z0-9_-]+)?)re");
  return std::regex_match(word, target);
}

// `folder` and every folder it uses, directly or not.
std::set<std::string> Closure(const std::string& folder,
                              const Layering& layering) {
  std::set<std::string> out;
  std::vector<std::string> todo = {folder};
  while (!todo.empty()) {
    const std::string next = todo.back();
    todo.pop_back();
    if (!out.insert(next).second) continue;
    const auto uses = layering.uses.find(next);
    if (uses == layering.uses.end()) continue;
    todo.insert(todo.end(), uses->second.begin(), uses->second.end());
  }
  return out;
}

}  // namespace

Tree ReadTree(const std::filesystem::path& root) {
  Tree tree;
  const std::filesystem::path components = root / "cmake/Components.cmake";
  if (!std::filesystem::exists(components)) return tree;
  tree["cmake/Components.cmake"] = ReadFile(components);
  for (const std::string& folder :
       ComponentFolders(tree["cmake/Components.cmake"])) {
    if (!std::filesystem::is_directory(root / folder)) continue;
    for (const auto& entry :
         std::filesystem::recursive_directory_iterator(root / folder)) {
      const std::string name = entry.path().filename().string();
      const std::string ext = entry.path().extension().string();
      if (name != "CMakeLists.txt" && ext != ".h" && ext != ".cc") continue;
      const std::string path =
          std::filesystem::relative(entry.path(), root).string();
      if (path.rfind("emitter/runtime/", 0) == 0) continue;
      tree[path] = ReadFile(entry.path());
    }
  }
  return tree;
}

Layering ReadLayering(const Tree& tree) {
  Layering layering;
  const auto components = tree.find("cmake/Components.cmake");
  if (components == tree.end()) return layering;
  layering.folders = ComponentFolders(components->second);
  static const std::regex command(
      R"re(\b(add_library|add_executable|tunefleet_proto_library|target_link_libraries)\s*\(([^)]*)\))re");
  // Target -> folder, then folder -> linked targets.
  std::map<std::string, std::string> folder_of_target;
  std::map<std::string, std::set<std::string>> links;
  for (const auto& [path, text] : tree) {
    if (std::filesystem::path(path).filename() != "CMakeLists.txt") continue;
    const std::string folder = FolderOf(path, layering);
    if (folder.empty()) continue;
    layering.uses[folder];
    const std::string cmake = WithoutComments(text);
    for (auto it = std::sregex_iterator(cmake.begin(), cmake.end(), command);
         it != std::sregex_iterator(); ++it) {
      const std::string name = (*it)[1].str();
      const std::vector<std::string> words = Words((*it)[2].str());
      if (words.empty()) continue;
      if (name != "target_link_libraries") folder_of_target[words[0]] = folder;
      if (name == "add_library" || name == "add_executable") continue;
      for (size_t i = 1; i < words.size(); ++i) {
        if (IsTunefleetTarget(words[i])) links[folder].insert(words[i]);
      }
    }
  }
  for (const auto& [folder, targets] : links) {
    for (const std::string& target : targets) {
      const auto defined = folder_of_target.find(target);
      if (defined == folder_of_target.end()) {
        layering.unknown_links.push_back(folder + ": " + target);
      } else if (defined->second != folder) {
        layering.uses[folder].insert(defined->second);
      }
    }
  }
  return layering;
}

std::vector<std::string> Cycles(const Layering& layering) {
  // Depth-first search; a back edge closes the cycle on the stack.
  std::map<std::string, int> state;  // 0 new, 1 on the stack, 2 done
  std::vector<std::string> stack;
  std::set<std::set<std::string>> seen;
  std::vector<std::string> cycles;
  std::function<void(const std::string&)> visit = [&](const std::string& at) {
    state[at] = 1;
    stack.push_back(at);
    const auto uses = layering.uses.find(at);
    if (uses != layering.uses.end()) {
      for (const std::string& next : uses->second) {
        if (state[next] == 0) {
          visit(next);
        } else if (state[next] == 1) {
          const auto from = std::find(stack.begin(), stack.end(), next);
          const std::set<std::string> members(from, stack.end());
          if (!seen.insert(members).second) continue;
          std::string cycle;
          for (auto it = from; it != stack.end(); ++it) cycle += *it + " -> ";
          cycles.push_back(cycle + next);
        }
      }
    }
    stack.pop_back();
    state[at] = 2;
  };
  for (const auto& [folder, uses] : layering.uses) {
    if (state[folder] == 0) visit(folder);
  }
  return cycles;
}

IncludeCheck CheckIncludes(const Tree& tree, const Layering& layering) {
  static const std::regex include(R"re(^\s*#\s*include\s+"([^"]+)")re");
  IncludeCheck check;
  std::map<std::string, std::set<std::string>> closures;  // by folder
  for (const auto& [path, text] : tree) {
    const std::string ext = std::filesystem::path(path).extension().string();
    const std::string folder = FolderOf(path, layering);
    if ((ext != ".h" && ext != ".cc") || folder.empty()) continue;
    auto closure = closures.find(folder);
    if (closure == closures.end()) {
      closure = closures.emplace(folder, Closure(folder, layering)).first;
    }
    std::istringstream in(text);
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
      std::smatch m;
      if (!std::regex_search(line, m, include)) continue;
      const std::string header = m[1].str();
      const std::string used = FolderOf(header, layering);
      if (used.empty()) continue;  // third-party
      ++check.checked;
      if (closure->second.count(used)) continue;
      check.violations.push_back(path + ":" + std::to_string(number) + " (" +
                                 folder + ") includes " + header + " (" + used +
                                 ")");
    }
  }
  return check;
}

std::vector<TableRow> ArchitectureTable(const std::string& markdown) {
  static const std::regex row(
      R"re(^\|\s*([0-9]+)\s*\|\s*`([A-Za-z0-9_]+)/`\s*\|.*\|([^|]*)\|\s*$)re");
  static const std::regex word(R"re([A-Za-z0-9_+.-]+)re");
  std::vector<TableRow> rows;
  std::istringstream in(markdown);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (!std::regex_search(line, m, row)) continue;
    TableRow table_row;
    table_row.level = std::stoi(m[1].str());
    table_row.folder = m[2].str();
    const std::string uses = m[3].str();
    for (auto it = std::sregex_iterator(uses.begin(), uses.end(), word);
         it != std::sregex_iterator(); ++it) {
      table_row.uses.insert(it->str());
    }
    rows.push_back(std::move(table_row));
  }
  return rows;
}

}  // namespace tunefleet::architecture
