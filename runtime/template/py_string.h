//===- py_string.h - Python str semantics on UTF-8 bytes --------*- C++ -*-===//
//
// Python strings index by code point and treat Unicode whitespace as
// whitespace; templates index, slice and strip message text, so these helpers
// do the same on UTF-8. Invalid UTF-8 is handled byte by byte, never rejected.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace llmc::tmpl::py {

// Byte offsets of each code point's start, plus s.size() at the end.
std::vector<std::size_t> codePointOffsets(std::string_view s);
std::size_t length(std::string_view s); // in code points
bool isAscii(std::string_view s);
std::uint32_t decodeAt(std::string_view s, std::size_t &i); // advances i
void appendUtf8(std::string &out, std::uint32_t cp);

bool isSpace(std::uint32_t cp); // str.isspace

// str.strip/lstrip/rstrip; chars == nullopt strips whitespace.
std::string strip(std::string_view s, const std::optional<std::string> &chars,
                  bool left, bool right);
// str.split / str.rsplit; sep == nullopt splits on whitespace runs.
std::vector<std::string> split(std::string_view s,
                               const std::optional<std::string> &sep,
                               std::int64_t maxsplit, bool fromRight = false);
std::vector<std::string> splitlines(std::string_view s, bool keepends = false);
std::string replace(std::string_view s, std::string_view from,
                    std::string_view to, std::int64_t count = -1);
std::string upper(std::string_view s);
std::string lower(std::string_view s);
std::string title(std::string_view s);      // str.title
std::string capitalize(std::string_view s); // str.capitalize
// Jinja's title filter: capitalizes words split on whitespace, - ( { [ <.
std::string jinjaTitle(std::string_view s);
std::int64_t count(std::string_view s, std::string_view sub);
// str.find in code points; -1 when absent.
std::int64_t find(std::string_view s, std::string_view sub, bool fromRight);

// repr(str): quotes and escapes the way Python does.
std::string repr(std::string_view s);
// repr(float): shortest round-trip digits, "1.0", "1e-05", "inf".
std::string formatFloat(double d);

} // namespace llmc::tmpl::py
