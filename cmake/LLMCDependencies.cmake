# Every third-party dependency, found once. The Debian packages that provide them
# are installed by tools/bootstrap.sh.

find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
find_package(OpenMP REQUIRED)
find_package(nlohmann_json 3.11 REQUIRED CONFIG)
find_package(GTest 1.12 REQUIRED CONFIG)
include(GoogleTest)
find_package(FlatBuffers 2.0 REQUIRED CONFIG)
find_package(CLI11 REQUIRED CONFIG)
pkg_check_modules(PCRE2 REQUIRED IMPORTED_TARGET libpcre2-8)
pkg_check_modules(SPM REQUIRED IMPORTED_TARGET sentencepiece)
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)

if(LLMC_ENABLE_COMPILER)
  find_package(MLIR 19.1 REQUIRED CONFIG HINTS /usr/lib/llvm-19/lib/cmake/mlir)
  list(APPEND CMAKE_MODULE_PATH "${MLIR_CMAKE_DIR}" "${LLVM_CMAKE_DIR}")
  # Plain CMake style: AddLLVM/TableGen/AddMLIR for mlir_tablegen, but not
  # HandleLLVMOptions, so our targets keep our flags (exceptions, -Werror).
  include(AddLLVM)
  include(TableGen)
  include(AddMLIR)
  # mlir-tblgen takes its -I flags from the directory include path.
  include_directories(SYSTEM ${LLVM_INCLUDE_DIRS} ${MLIR_INCLUDE_DIRS})
  separate_arguments(LLVM_DEFS NATIVE_COMMAND ${LLVM_DEFINITIONS})
  add_definitions(${LLVM_DEFS})
endif()

# CUDA is optional: the backend builds wherever nvcc is found.
set(LLMC_HAVE_CUDA OFF)
if(NOT LLMC_ENABLE_CUDA STREQUAL "OFF" AND NOT LLMC_SANITIZE)
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    set(LLMC_HAVE_CUDA ON)
  elseif(LLMC_ENABLE_CUDA STREQUAL "ON")
    message(FATAL_ERROR "LLMC_ENABLE_CUDA=ON but no CUDA compiler was found")
  endif()
endif()
message(STATUS "llmc: compiler=${LLMC_ENABLE_COMPILER} cuda=${LLMC_HAVE_CUDA} sanitize=${LLMC_SANITIZE}")
