// The dashboard's fleet view over a store (dashboard/store_source.h): a
// device key's driver revisions reach /api/fleet's JSON (dashboard/
// json_views.h) with their re-validation counts, oldest first.
#include "dashboard/store_source.h"

#include <unistd.h>

#include <filesystem>
#include <string>

#include "dashboard/json_views.h"
#include "gtest/gtest.h"
#include "store/store.h"
#include "tests/support/drifted_device.h"

namespace tunefleet::dashboard {
namespace {

TEST(StoreDataSource, FleetCarriesEachKeysDriverRevisions) {
  const std::string path = ::testing::TempDir() + "/store_source_test_" +
                           std::to_string(getpid()) + ".db";
  std::filesystem::remove(path);
  auto store = store::Store::Open(path);
  ASSERT_TRUE(store.ok()) << store.status();
  auto noted =
      testing::StoreDriftedDevice(**store, "mali", {"r1p0", "r2p0 ota"});
  ASSERT_TRUE(noted.ok()) << noted.status();
  ASSERT_EQ(noted->size(), 2u);
  EXPECT_EQ((*noted)[0].revision, 1);
  EXPECT_EQ((*noted)[1].revision, 2);
  EXPECT_TRUE((*noted)[1].added);
  ASSERT_TRUE((*store)->UpsertDevice("other", testing::MaliG610()).ok());

  StoreDataSource source(store->get());
  auto fleet = source.Fleet();
  ASSERT_TRUE(fleet.ok()) << fleet.status();
  ASSERT_EQ(fleet->devices.size(), 2u);
  const nlohmann::json j = FleetJson(*fleet);
  for (const auto& d : j["devices"]) {
    if (d["device_key"] == "other") {
      EXPECT_TRUE(d["driver_revisions"].empty()) << d.dump();
      continue;
    }
    ASSERT_EQ(d["driver_revisions"].size(), 2u) << d.dump();
    EXPECT_EQ(d["driver_revisions"][0]["driver_version"], "r1p0");
    EXPECT_EQ(d["driver_revisions"][1]["driver_version"], "r2p0 ota");
    EXPECT_EQ(d["driver_revisions"][1]["revision"], 2);
  }
  store->reset();
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace tunefleet::dashboard
