// The layering of docs/ARCHITECTURE.md, checked on the sources with the rule
// read from the folders (layering.h): one folder per library, its links in
// its CMakeLists.txt, no cycle between folders, no include its links do not
// allow, and the document's table of folders equal to the folders.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/unit/architecture/layering.h"

namespace tunefleet::architecture {
namespace {

std::string Joined(const std::vector<std::string>& lines) {
  std::string all;
  for (const std::string& line : lines) all += "\n  " + line;
  return all;
}

const Tree& RealTree() {
  static const Tree tree = ReadTree(TUNEFLEET_SOURCE_DIR);
  return tree;
}

TEST(Layers, TheFoldersAreReadFromComponentsAndTheirCMakeFiles) {
  const Layering layering = ReadLayering(RealTree());
  ASSERT_GT(layering.folders.size(), 20u)
      << "no cmake/Components.cmake under " << TUNEFLEET_SOURCE_DIR;
  EXPECT_TRUE(layering.unknown_links.empty())
      << "linked but defined in no library folder:"
      << Joined(layering.unknown_links);
  // Spot checks of what the CMake files say.
  EXPECT_TRUE(layering.uses.at("search").count("search_space"));
  EXPECT_TRUE(layering.uses.at("search_space").count("cost_model"));
  EXPECT_TRUE(layering.uses.at("dashboard").count("auth"));
  EXPECT_FALSE(layering.uses.at("cost_model").count("search"));
}

TEST(Layers, NoCycleBetweenFolders) {
  const std::vector<std::string> cycles = Cycles(ReadLayering(RealTree()));
  EXPECT_TRUE(cycles.empty()) << Joined(cycles);
}

TEST(Layers, EveryIncludeStaysWithinItsFoldersLinks) {
  const Tree& tree = RealTree();
  const Layering layering = ReadLayering(tree);
  const IncludeCheck check = CheckIncludes(tree, layering);
  RecordProperty("library_includes", check.checked);
  EXPECT_GT(check.checked, 500);
  EXPECT_TRUE(check.violations.empty()) << Joined(check.violations);
}

TEST(Layers, APlantedIncludeAcrossTheRuleFails) {
  Tree tree = RealTree();
  // cost_model links nothing of tunefleet: the server is out of reach.
  tree["cost_model/features.cc"] += "\n#include \"server/server.h\"\n";
  const std::vector<std::string> violations =
      CheckIncludes(tree, ReadLayering(tree)).violations;
  ASSERT_EQ(violations.size(), 1u) << Joined(violations);
  EXPECT_NE(violations[0].find("cost_model/features.cc"), std::string::npos);
  EXPECT_NE(violations[0].find("server/server.h (server)"), std::string::npos);
}

TEST(Layers, APlantedLinkThatMakesACycleFails) {
  Tree tree = RealTree();
  // base is below everything; linking the store from it closes a cycle.
  tree["base/CMakeLists.txt"] +=
      "\ntarget_link_libraries(tunefleet_base PUBLIC tunefleet_store)\n";
  const std::vector<std::string> cycles = Cycles(ReadLayering(tree));
  ASSERT_FALSE(cycles.empty());
  const bool names_both =
      std::any_of(cycles.begin(), cycles.end(), [](const std::string& cycle) {
        return cycle.find("base") != std::string::npos &&
               cycle.find("store") != std::string::npos;
      });
  EXPECT_TRUE(names_both) << Joined(cycles);
}

TEST(Layers, APlantedLinkToNothingIsReported) {
  Tree tree = RealTree();
  tree["base/CMakeLists.txt"] +=
      "\ntarget_link_libraries(tunefleet_base PUBLIC tunefleet_nowhere)\n";
  const Layering layering = ReadLayering(tree);
  EXPECT_EQ(layering.unknown_links,
            std::vector<std::string>{"base: tunefleet_nowhere"});
}

std::string ArchitectureDoc() {
  std::ifstream in(std::filesystem::path(TUNEFLEET_SOURCE_DIR) /
                   "docs/ARCHITECTURE.md");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(Layers, ArchitecturesTableListsEveryFolderOnceWithItsLinks) {
  const Layering layering = ReadLayering(RealTree());
  const std::vector<TableRow> rows = ArchitectureTable(ArchitectureDoc());
  std::vector<std::string> table_folders;
  for (const TableRow& row : rows) table_folders.push_back(row.folder);
  std::vector<std::string> folders = layering.folders;
  std::sort(table_folders.begin(), table_folders.end());
  std::sort(folders.begin(), folders.end());
  EXPECT_EQ(table_folders, folders)
      << "docs/ARCHITECTURE.md's table of folders and the tunefleet_folder "
         "lines of cmake/Components.cmake differ";
  std::map<std::string, int> level;
  for (const TableRow& row : rows) level[row.folder] = row.level;
  for (const TableRow& row : rows) {
    std::set<std::string> listed;  // the folders among the uses column
    for (const std::string& word : row.uses) {
      if (level.count(word)) listed.insert(word);
    }
    EXPECT_EQ(listed, layering.uses.at(row.folder))
        << "the uses column of " << row.folder << "/";
    for (const std::string& used : layering.uses.at(row.folder)) {
      EXPECT_LT(level[used], row.level)
          << row.folder << "/ (level " << row.level << ") uses " << used
          << "/ (level " << level[used] << ")";
    }
  }
}

}  // namespace
}  // namespace tunefleet::architecture
