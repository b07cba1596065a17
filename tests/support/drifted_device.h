// A device key whose agents brought more than one driver, as the store
// keeps it (docs/DRIVER_DRIFT.md): for tests of what the dashboard shows of
// driver revisions, over a StoreDataSource or the pages.
#ifndef TUNEFLEET_TESTS_SUPPORT_DRIFTED_DEVICE_H_
#define TUNEFLEET_TESTS_SUPPORT_DRIFTED_DEVICE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "store/store.h"
#include "tunefleet/v1/common.pb.h"

namespace tunefleet::testing {

// A Mali-G610 as its agent reports it, on driver `driver`.
inline tunefleet::v1::DeviceInfo MaliG610(const std::string& driver = "r1p0") {
  tunefleet::v1::DeviceInfo info;
  info.set_device_name("Mali-G610");
  info.set_driver_version(driver);
  return info;
}

// One Store::NoteDriver's answer.
struct NotedDriver {
  int revision = 0;
  bool added = false;
};

// Stores device key `key` as a MaliG610 on `drivers`' first and notes each
// of `drivers` in order, as its agents reporting them would. Returns what
// each NoteDriver answered. Errors: the store's.
inline absl::StatusOr<std::vector<NotedDriver>> StoreDriftedDevice(
    store::Store& store, const std::string& key,
    const std::vector<std::string>& drivers) {
  absl::Status upserted =
      store.UpsertDevice(key, MaliG610(drivers.empty() ? "" : drivers[0]));
  if (!upserted.ok()) return upserted;
  std::vector<NotedDriver> noted;
  for (const std::string& driver : drivers) {
    NotedDriver n;
    absl::StatusOr<int> revision = store.NoteDriver(key, driver, &n.added);
    if (!revision.ok()) return revision.status();
    n.revision = *revision;
    noted.push_back(n);
  }
  return noted;
}

}  // namespace tunefleet::testing

#endif  // TUNEFLEET_TESTS_SUPPORT_DRIFTED_DEVICE_H_
