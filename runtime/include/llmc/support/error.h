//===- error.h - The one exception type of llmc's C++ libraries -*- C++ -*-===//
//
// Parsers and the runtime report bad input by throwing llmc::Error with a
// message a user can act on: it names the file, tensor or flag and says what
// is wrong. Tools catch it at the top, print "llmc: error: <message>" and exit
// non-zero. Nothing throws across the backend plugin C ABI.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <stdexcept>
#include <string>

namespace llmc {

class Error : public std::runtime_error {
public:
  explicit Error(const std::string &message) : std::runtime_error(message) {}
};

} // namespace llmc
