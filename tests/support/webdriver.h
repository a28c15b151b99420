// A headless Chromium driven from a test through chromedriver's W3C WebDriver HTTP API
// (https://www.w3.org/TR/webdriver2/), with httplib and nlohmann-json: start chromedriver on a
// free port, open a session, navigate, find elements by CSS selector, click, type, read text,
// take screenshots. Chromium and chromedriver come from Debian (scripts/install-deps); tests run
// as root in CI, hence --no-sandbox.
//
// Cleanup is RAII and runs on failure too: ~BrowserSession quits the session (Chromium exits),
// ~ChromeDriver stops chromedriver (SIGTERM, then SIGKILL) and reaps it.
//
// Thread safety: none; one test thread drives one session.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "support/processes.h"

namespace quick::testing {

// A TCP port on 127.0.0.1 that was free a moment ago (bound to port 0, then released).
int free_tcp_port();

// The chromedriver process. Throws std::runtime_error when it does not answer within 15 s.
class ChromeDriver {
 public:
  ChromeDriver();
  ~ChromeDriver();
  ChromeDriver(const ChromeDriver&) = delete;
  ChromeDriver& operator=(const ChromeDriver&) = delete;

  int port() const { return port_; }
  // Its log, for failure messages.
  std::string log() const;

 private:
  TempDir dir_;
  int port_ = 0;
  std::unique_ptr<ChildProcess> process_;
};

// One browser session: a headless Chromium window of the given size.
class BrowserSession {
 public:
  BrowserSession(ChromeDriver& driver, int width = 1400, int height = 1000);
  ~BrowserSession();
  BrowserSession(const BrowserSession&) = delete;
  BrowserSession& operator=(const BrowserSession&) = delete;

  void navigate(const std::string& url);
  // The text of the first element matching `css` as the user sees it; nothing when none matches.
  std::optional<std::string> text(const std::string& css);
  // The accessible name of each element matching `css` (what a screen reader announces), in
  // document order.
  std::vector<std::string> accessible_names(const std::string& css);
  // Whether an element matches `css` now.
  bool exists(const std::string& css) { return find(css).has_value(); }
  // Clicks the first element matching `css` (found again if the page replaced it meanwhile);
  // throws when none does.
  void click(const std::string& css);
  // Clears the first input matching `css` and types `keys` into it; throws when none matches.
  void type(const std::string& css, const std::string& keys);
  // Runs `script` (a function body; `arguments` holds `args`) in the page; returns its value.
  nlohmann::json execute(const std::string& script, const nlohmann::json& args = nlohmann::json::array());
  // Runs `source` in every page loaded from now on, before the page's own scripts (Chromium's
  // Page.addScriptToEvaluateOnNewDocument): to watch or pace what the page does.
  void run_before_page_scripts(const std::string& source);
  // The text of the dialog (alert, confirm) the page shows now; nothing when it shows none.
  std::optional<std::string> dialog_text();
  // Answers the dialog the page shows now: OK, or Cancel. Throws when it shows none.
  void accept_dialog();
  void dismiss_dialog();
  // A PNG of the window.
  std::string screenshot_png();
  void save_screenshot(const std::filesystem::path& file);

 private:
  std::optional<std::string> find(const std::string& css);
  std::string require(const std::string& css);
  // One WebDriver command; throws std::runtime_error with the driver's error on failure.
  nlohmann::json command(const std::string& method, const std::string& path,
                         const nlohmann::json& body = nlohmann::json::object());

  httplib::Client client_;
  std::string session_id_;
};

}  // namespace quick::testing
