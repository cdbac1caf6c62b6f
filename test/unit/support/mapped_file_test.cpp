#include "llmc/support/error.h"
#include "llmc/support/mapped_file.h"

#include <fstream>
#include <gtest/gtest.h>

using namespace llmc;

TEST(MappedFile, MapsContents) {
  std::string path = ::testing::TempDir() + "/mapped_file_test.bin";
  std::ofstream(path, std::ios::binary) << "hello";
  MappedFile f(path);
  EXPECT_EQ(f.bytes(), "hello");
  MappedFile moved(std::move(f));
  EXPECT_EQ(moved.size(), 5u);
  EXPECT_EQ(f.size(), 0u);
}

TEST(MappedFile, MissingFileNamesThePath) {
  try {
    MappedFile f("/nonexistent/llmc/file.bin");
    FAIL() << "expected an error";
  } catch (const Error &e) {
    EXPECT_NE(
        std::string(e.what()).find("/nonexistent/llmc/file.bin: cannot open"),
        std::string::npos);
  }
}

TEST(MappedFile, DirectoryIsRefused) {
  EXPECT_THROW(MappedFile f(::testing::TempDir()), Error);
}
