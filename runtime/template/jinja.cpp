#include "llmc/template/jinja.h"

#include "interpreter.h"
#include "parser.h"

namespace llmc::tmpl {

Template::Template(std::string source)
    : program_(std::make_shared<const Program>(parse(source))) {}

Template::~Template() = default;
Template::Template(const Template &) = default;
Template::Template(Template &&) noexcept = default;
Template &Template::operator=(const Template &) = default;
Template &Template::operator=(Template &&) noexcept = default;

std::string Template::render(const nlohmann::ordered_json &context,
                             const RenderOptions &options) const {
  Interpreter interpreter(context, options);
  return interpreter.run(*program_);
}

} // namespace llmc::tmpl
