//===- ui_assets.h - The chat page's files, built into llmc ----*- C++ -*-===//
//
// runtime/serve/ui/*: plain HTML, CSS and JavaScript in the tree, embedded
// at build time (cmake/EmbedFiles.cmake) so that a copied binary serves
// them. Immutable; any thread.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string_view>

namespace llmc {

struct UiAsset {
  std::string_view body;
  const char *contentType;
};

/// The file served at `path` ("/" is the page, "/ui/chat.js" ...), or null.
const UiAsset *uiAsset(std::string_view path);

} // namespace llmc
