#include "support/webdriver.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace quick::testing {
namespace {

// W3C WebDriver's key for an element reference in JSON.
constexpr const char* kElementKey = "element-6066-11e4-a52e-4f735466cecf";

std::string base64_decode(const std::string& text) {
  static const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  unsigned int buffer = 0;
  int bits = 0;
  for (const char c : text) {
    const auto value = alphabet.find(c);
    if (value == std::string::npos) continue;  // '=' padding, line breaks
    buffer = (buffer << 6) | static_cast<unsigned int>(value);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((buffer >> bits) & 0xFF));
    }
  }
  return out;
}

// The pids of this process's children named chromium or chrome_* (Chromium's helpers, which
// become our children when chromedriver exits: see the subreaper in ChromeDriver()).
std::vector<pid_t> chromium_children() {
  std::vector<pid_t> pids;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string stat = read_text_file(entry.path() / "stat");  // "pid (comm) state ppid ..."
    const auto open = stat.find('('), close = stat.rfind(')');
    if (open == std::string::npos || close == std::string::npos) continue;
    const std::string comm = stat.substr(open + 1, close - open - 1);
    std::istringstream rest(stat.substr(close + 1));
    std::string state;
    pid_t parent = 0;
    rest >> state >> parent;
    if (parent == ::getpid() && comm.rfind("chrom", 0) == 0) pids.push_back(std::stoi(name));
  }
  return pids;
}

// Reaps Chromium's processes once they exit, killing those still running after a grace period,
// so that no zombie or stray browser outlives the test.
void reap_chromium() {
  const auto reap = [] {
    for (const pid_t pid : chromium_children()) ::waitpid(pid, nullptr, WNOHANG);
    return chromium_children().empty();
  };
  if (eventually(reap, std::chrono::seconds(3), std::chrono::milliseconds(20))) return;
  for (const pid_t pid : chromium_children()) ::kill(pid, SIGKILL);
  eventually(reap, std::chrono::seconds(3), std::chrono::milliseconds(20));
}

}  // namespace

int free_tcp_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("socket failed");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof(address);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    ::close(fd);
    throw std::runtime_error("cannot find a free port");
  }
  ::close(fd);
  return ntohs(address.sin_port);
}

ChromeDriver::ChromeDriver() : port_(free_tcp_port()) {
  // Chromium's processes, orphaned when chromedriver exits, become this process's children
  // rather than PID 1's (which in a container may never reap them): ~ChromeDriver reaps them.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  process_ = std::make_unique<ChildProcess>(
      std::vector<std::string>{"/usr/bin/chromedriver", "--port=" + std::to_string(port_)}, std::vector<std::string>{},
      dir_ / "chromedriver.out", dir_ / "chromedriver.err");
  httplib::Client client("127.0.0.1", port_);
  client.set_connection_timeout(1);
  const bool ready = eventually(
      [&] {
        const auto response = client.Get("/status");
        if (!response || response->status != 200) return false;
        const auto body = nlohmann::json::parse(response->body, nullptr, false);
        return !body.is_discarded() && body["value"].value("ready", false);
      },
      std::chrono::seconds(15), std::chrono::milliseconds(50));
  if (!ready) throw std::runtime_error("chromedriver did not become ready within 15 s: " + log());
}

ChromeDriver::~ChromeDriver() {
  if (!process_->exited()) {
    process_->signal(SIGTERM);
    if (!process_->wait_for(std::chrono::seconds(3))) process_->signal(SIGKILL);
    process_->wait_for(std::chrono::seconds(3));
  }
  reap_chromium();
}

std::string ChromeDriver::log() const { return process_->out() + process_->err(); }

BrowserSession::BrowserSession(ChromeDriver& driver, int width, int height) : client_("127.0.0.1", driver.port()) {
  client_.set_read_timeout(60);
  const nlohmann::json capabilities = {
      {"capabilities",
       {{"alwaysMatch",
         {{"browserName", "chrome"},
          {"goog:chromeOptions",
           {{"binary", "/usr/bin/chromium"},
            {"args",
             {"--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--window-size=" + std::to_string(width) + "," + std::to_string(height)}}}}}}}}};
  const auto value = command("POST", "/session", capabilities);
  session_id_ = value.at("sessionId").get<std::string>();
}

BrowserSession::~BrowserSession() {
  if (session_id_.empty()) return;
  try {
    command("DELETE", "/session/" + session_id_);
  } catch (const std::exception&) {
    // chromedriver's own stop (ChromeDriver's destructor) ends the browser then.
  }
}

nlohmann::json BrowserSession::command(const std::string& method, const std::string& path, const nlohmann::json& body) {
  httplib::Result response = method == "GET"      ? client_.Get(path.c_str())
                             : method == "DELETE" ? client_.Delete(path.c_str())
                                                  : client_.Post(path.c_str(), body.dump(), "application/json");
  if (!response) throw std::runtime_error("WebDriver " + method + " " + path + ": no answer from chromedriver");
  const auto answer = nlohmann::json::parse(response->body, nullptr, false);
  if (answer.is_discarded()) throw std::runtime_error("WebDriver " + path + ": not JSON: " + response->body);
  if (response->status != 200) {
    throw std::runtime_error("WebDriver " + method + " " + path + " failed (" + std::to_string(response->status) + " " +
                             answer["value"].value("error", "") +
                             "): " + answer["value"].value("message", response->body));
  }
  return answer["value"];
}

void BrowserSession::navigate(const std::string& url) {
  command("POST", "/session/" + session_id_ + "/url", {{"url", url}});
}

std::optional<std::string> BrowserSession::find(const std::string& css) {
  const auto found = command("POST", "/session/" + session_id_ + "/elements",
                             {{"using", "css selector"}, {"value", css}});
  if (found.empty()) return std::nullopt;
  return found.at(0).at(kElementKey).get<std::string>();
}

std::string BrowserSession::require(const std::string& css) {
  auto element = find(css);
  if (!element) throw std::runtime_error("no element matches " + css);
  return *element;
}

std::optional<std::string> BrowserSession::text(const std::string& css) {
  const auto element = find(css);
  if (!element) return std::nullopt;
  try {
    return command("GET", "/session/" + session_id_ + "/element/" + *element + "/text").get<std::string>();
  } catch (const std::runtime_error&) {
    return std::nullopt;  // replaced by a refresh between finding and reading: read it next poll
  }
}

std::vector<std::string> BrowserSession::accessible_names(const std::string& css) {
  std::vector<std::string> names;
  for (const auto& element :
       command("POST", "/session/" + session_id_ + "/elements", {{"using", "css selector"}, {"value", css}})) {
    names.push_back(command("GET", "/session/" + session_id_ + "/element/" +
                                       element.at(kElementKey).get<std::string>() + "/computedlabel")
                        .get<std::string>());
  }
  return names;
}

void BrowserSession::click(const std::string& css) {
  // A page that re-renders (the dashboard refreshes its tables) may replace the element between
  // finding and clicking it: find it again, a few times.
  for (int attempt = 1;; ++attempt) {
    try {
      command("POST", "/session/" + session_id_ + "/element/" + require(css) + "/click");
      return;
    } catch (const std::runtime_error& error) {
      if (attempt == 5 || std::string(error.what()).find("stale element") == std::string::npos) throw;
    }
  }
}

void BrowserSession::type(const std::string& css, const std::string& keys) {
  const auto element = require(css);
  command("POST", "/session/" + session_id_ + "/element/" + element + "/clear");
  command("POST", "/session/" + session_id_ + "/element/" + element + "/value", {{"text", keys}});
}

nlohmann::json BrowserSession::execute(const std::string& script, const nlohmann::json& args) {
  return command("POST", "/session/" + session_id_ + "/execute/sync", {{"script", script}, {"args", args}});
}

void BrowserSession::run_before_page_scripts(const std::string& source) {
  command("POST", "/session/" + session_id_ + "/goog/cdp/execute",
          {{"cmd", "Page.addScriptToEvaluateOnNewDocument"}, {"params", {{"source", source}}}});
}

std::optional<std::string> BrowserSession::dialog_text() {
  try {
    return command("GET", "/session/" + session_id_ + "/alert/text").get<std::string>();
  } catch (const std::runtime_error& error) {
    if (std::string(error.what()).find("no such alert") != std::string::npos) return std::nullopt;
    throw;
  }
}

void BrowserSession::accept_dialog() { command("POST", "/session/" + session_id_ + "/alert/accept"); }

void BrowserSession::dismiss_dialog() { command("POST", "/session/" + session_id_ + "/alert/dismiss"); }

std::string BrowserSession::screenshot_png() {
  return base64_decode(command("GET", "/session/" + session_id_ + "/screenshot").get<std::string>());
}

void BrowserSession::save_screenshot(const std::filesystem::path& file) {
  std::filesystem::create_directories(file.parent_path());
  std::ofstream(file, std::ios::binary | std::ios::trunc) << screenshot_png();
}

}  // namespace quick::testing
