#include "regex.h"

#include "llmc/support/utf8.h"

#include "llmc/support/error.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

namespace llmc::tok::detail {

const char *const kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
const char *const kLlama3Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const char *const kQwen2Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

struct Regex::Impl {
  pcre2_code *code = nullptr;
  bool jit = false;
};

Regex::Regex(const std::string &pattern, bool literal,
             const std::string &origin)
    : impl_(std::make_unique<Impl>()) {
  int error = 0;
  PCRE2_SIZE offset = 0;
  // PCRE2 refuses PCRE2_UCP beside PCRE2_LITERAL (a literal has no classes
  // for it to change): Gemma's Split on {"String": " "}.
  uint32_t options = PCRE2_UTF | PCRE2_MATCH_INVALID_UTF |
                     (literal ? PCRE2_LITERAL : PCRE2_UCP);
  impl_->code =
      pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()),
                    pattern.size(), options, &error, &offset, nullptr);
  if (!impl_->code) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error, message, sizeof message);
    throw Error(origin + ": cannot compile regex '" + pattern + "' at offset " +
                std::to_string(offset) + ": " +
                reinterpret_cast<const char *>(message));
  }
  impl_->jit = pcre2_jit_compile(impl_->code, PCRE2_JIT_COMPLETE) == 0;
}

Regex::~Regex() {
  if (impl_)
    pcre2_code_free(impl_->code);
}

std::vector<std::pair<size_t, size_t>>
Regex::findAll(std::string_view text) const {
  std::vector<std::pair<size_t, size_t>> matches;
  pcre2_match_data *data =
      pcre2_match_data_create_from_pattern(impl_->code, nullptr);
  if (!data)
    throw std::bad_alloc();
  auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t pos = 0;
  while (pos < text.size()) {
    int rc =
        pcre2_match(impl_->code, subject, text.size(), pos, 0, data, nullptr);
    // The JIT stack can run out on pathological input; the interpreter
    // has no such limit worth hitting here.
    if (rc < 0 && rc != PCRE2_ERROR_NOMATCH && impl_->jit)
      rc = pcre2_match(impl_->code, subject, text.size(), pos, PCRE2_NO_JIT,
                       data, nullptr);
    if (rc < 0)
      break;
    PCRE2_SIZE *ovector = pcre2_get_ovector_pointer(data);
    size_t begin = ovector[0], end = ovector[1];
    if (end > begin) {
      matches.emplace_back(begin, end);
      pos = end;
    } else {
      pos = begin + utf8::charLength(text, begin); // step past an empty match
    }
  }
  pcre2_match_data_free(data);
  return matches;
}

} // namespace llmc::tok::detail
