#include "llmc/template/jinja.h"

#include <gtest/gtest.h>

namespace llmc::tmpl {
namespace {
using nlohmann::ordered_json;

std::string render(const std::string &source,
                   const ordered_json &ctx = ordered_json::object(),
                   const RenderOptions &options = {}) {
  return Template(source).render(ctx, options);
}

TEST(Jinja, Smoke) { EXPECT_EQ(render("a{{ 1 + 2 }}b"), "a3b"); }

} // namespace
} // namespace llmc::tmpl
