// A model job's progress from its row, its tasks' progress and its task
// scheduler: the builder lives in dashboard/stored_progress.h (the stored
// form is read by the dashboard over a database file too); the server's
// running model jobs use it under these names.
#ifndef TUNEFLEET_SERVER_MODEL_PROGRESS_H_
#define TUNEFLEET_SERVER_MODEL_PROGRESS_H_

#include "dashboard/stored_progress.h"

namespace tunefleet::server {

using dashboard::ModelJobProgress;
using dashboard::ModelTaskView;
using dashboard::ResultsOf;
using dashboard::SchedulerOptionsOf;
using dashboard::SchedulerTaskOf;
using dashboard::StoredModelProgress;

}  // namespace tunefleet::server

#endif  // TUNEFLEET_SERVER_MODEL_PROGRESS_H_
