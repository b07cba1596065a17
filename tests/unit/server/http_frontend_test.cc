// The dashboard's fleet view over a store (server/http_frontend.h): a
// device key's driver revisions reach /api/fleet's JSON (dashboard/
// json_views.h) with their re-validation counts, oldest first.
#include "server/http_frontend.h"

#include <unistd.h>

#include <filesystem>
#include <string>

#include "dashboard/json_views.h"
#include "gtest/gtest.h"
#include "store/store.h"

namespace tunefleet::server {
namespace {

TEST(StoreDataSource, FleetCarriesEachKeysDriverRevisions) {
  const std::string path = ::testing::TempDir() + "/http_frontend_test_" +
                           std::to_string(getpid()) + ".db";
  std::filesystem::remove(path);
  auto store = store::Store::Open(path);
  ASSERT_TRUE(store.ok()) << store.status();
  tunefleet::v1::DeviceInfo info;
  info.set_device_name("Mali-G610");
  info.set_driver_version("r1p0");
  ASSERT_TRUE((*store)->UpsertDevice("mali", info).ok());
  ASSERT_TRUE((*store)->UpsertDevice("other", info).ok());
  bool added = false;
  ASSERT_EQ(*(*store)->NoteDriver("mali", "r1p0", &added), 1);
  ASSERT_EQ(*(*store)->NoteDriver("mali", "r2p0 ota", &added), 2);
  EXPECT_TRUE(added);

  StoreDataSource source(store->get());
  auto fleet = source.Fleet();
  ASSERT_TRUE(fleet.ok()) << fleet.status();
  ASSERT_EQ(fleet->devices.size(), 2u);
  const nlohmann::json j = dashboard::FleetJson(*fleet);
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
}  // namespace tunefleet::server
