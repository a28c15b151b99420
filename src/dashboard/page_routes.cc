// The page itself: the files of src/dashboard/page/, embedded at build time
// (cmake/EmbedDashboardPage.cmake), so the binary needs no source tree and the page no build step.
#include "dashboard/page_assets.h"
#include "dashboard/routes.h"

namespace quick::dashboard {

void add_page_routes(httplib::Server& server) {
  for (std::size_t i = 0; i < page::kAssetCount; ++i) {
    const page::Asset& asset = page::kAssets[i];
    const std::string path = std::string(asset.name) == "index.html" ? "/" : "/" + std::string(asset.name);
    server.Get(path, [&asset](const httplib::Request&, httplib::Response& response) {
      // Scripts and styles come from this origin only, and never inline: data the page shows
      // cannot run as script even if escaping failed somewhere.
      response.set_header("Content-Security-Policy",
                          "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                          "frame-ancestors 'none'; base-uri 'none'; form-action 'none'");
      response.set_header("X-Content-Type-Options", "nosniff");
      response.set_header("Referrer-Policy", "no-referrer");
      response.set_header("Cache-Control", "no-cache");
      response.set_content(asset.body, asset.size, asset.content_type);
    });
  }
}

}  // namespace quick::dashboard
