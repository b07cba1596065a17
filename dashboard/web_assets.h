// The dashboard's page, script and style (dashboard/web/) and Chart.js
// (Debian's libjs-chart.js, /usr/share/javascript/chart.js/chart.min.js),
// embedded into the binaries at build time (cmake/EmbedText.cmake): the
// dashboard loads nothing from elsewhere, and Chart.js is never in the
// repository.
#ifndef TUNEFLEET_DASHBOARD_WEB_ASSETS_H_
#define TUNEFLEET_DASHBOARD_WEB_ASSETS_H_

#include "absl/strings/string_view.h"

namespace tunefleet::dashboard::web {

absl::string_view IndexHtml();  // dashboard/web/index.html
absl::string_view AppJs();      // dashboard/web/app.js
absl::string_view StyleCss();   // dashboard/web/style.css
absl::string_view ChartJs();    // Chart.js 3, minified (UMD: window.Chart)

}  // namespace tunefleet::dashboard::web

#endif  // TUNEFLEET_DASHBOARD_WEB_ASSETS_H_
