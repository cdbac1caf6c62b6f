#include "cli_util.h"
#include "llmc/support/error.h"

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>

namespace llmc::cli {

std::vector<int32_t> parseIds(const std::string &text,
                              const std::string &flag) {
  std::vector<int32_t> ids;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string::npos)
      comma = text.size();
    std::string item = text.substr(pos, comma - pos);
    while (!item.empty() && item.front() == ' ')
      item.erase(item.begin());
    while (!item.empty() && item.back() == ' ')
      item.pop_back();
    int32_t v = 0;
    auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || ec != std::errc() || end != item.data() + item.size())
      throw Error(flag + ": '" + item +
                  "' is not a token id (expected comma-separated integers "
                  "like 1,2,3)");
    ids.push_back(v);
    pos = comma + 1;
  }
  return ids;
}

void writeFile(const std::string &path, const void *bytes, size_t size) {
  std::ofstream out(path, std::ios::binary);
  if (!out)
    throw Error(path + ": cannot write: " + std::strerror(errno));
  out.write(static_cast<const char *>(bytes),
            static_cast<std::streamsize>(size));
  if (!out)
    throw Error(path + ": write failed");
}

} // namespace llmc::cli
