# Helpers every folder uses to declare its targets the same way.

# Our own code builds warning-free; third-party headers are included as SYSTEM.
function(llmc_target_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX,C>:-Wall -Wextra -Werror>)
  # GCC 12 reports -Wrestrict inside libstdc++'s std::string operator+ at -O3
  # (GCC bug 105651), a false positive in the library, not in our code.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wno-restrict>)
  endif()
endfunction()

function(llmc_target_sanitize target)
  if(LLMC_SANITIZE)
    target_compile_options(${target} PRIVATE -fsanitize=address,undefined
                           -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
    # GCC's flow analysis misreads ASan-instrumented code and reports
    # -Wstringop-overflow on plain vector appends (a known false positive).
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
      target_compile_options(${target} PRIVATE -Wno-stringop-overflow)
    endif()
    target_link_options(${target} PRIVATE -fsanitize=address,undefined)
  endif()
endfunction()

# llmc_add_library(name [STATIC|SHARED] SOURCES ... [LIBS ...] [INCLUDES ...])
function(llmc_add_library name)
  cmake_parse_arguments(ARG "SHARED" "" "SOURCES;LIBS;INCLUDES;PRIVATE_LIBS" ${ARGN})
  if(ARG_SHARED)
    add_library(${name} SHARED ${ARG_SOURCES})
  else()
    add_library(${name} STATIC ${ARG_SOURCES})
  endif()
  target_include_directories(${name} PUBLIC ${ARG_INCLUDES})
  target_link_libraries(${name} PUBLIC ${ARG_LIBS} PRIVATE ${ARG_PRIVATE_LIBS})
  llmc_target_warnings(${name})
  llmc_target_sanitize(${name})
  if(LLMC_FUZZ)
    # Libraries a fuzzer calls need coverage feedback and ASan too.
    target_compile_options(${name} PRIVATE -fsanitize=fuzzer-no-link,address,undefined)
    target_link_options(${name} PUBLIC -fsanitize=address,undefined)
  endif()
endfunction()

# llmc_add_gtest(name SOURCES ... LIBS ...): one GoogleTest binary, registered
# with CTest case by case.
function(llmc_add_gtest name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gtest_main GTest::gmock)
  target_compile_definitions(${name} PRIVATE
    LLMC_DATA_DIR="${LLMC_DATA_DIR}" LLMC_BIN_DIR="${PROJECT_BINARY_DIR}/bin")
  llmc_target_warnings(${name})
  llmc_target_sanitize(${name})
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60
    PROPERTIES ENVIRONMENT "LLMC_BACKEND_PATH=${PROJECT_BINARY_DIR}/bin")
endfunction()

# llmc_add_fuzzer(name SOURCES ... LIBS ...): a libFuzzer target (LLMC_FUZZ=ON, clang).
function(llmc_add_fuzzer name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  if(NOT LLMC_FUZZ)
    return()
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS})
  if(NOT TARGET llmc-fuzzers)
    add_custom_target(llmc-fuzzers)
  endif()
  add_dependencies(llmc-fuzzers ${name})
  target_compile_options(${name} PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_options(${name} PRIVATE -fsanitize=fuzzer,address,undefined)
  llmc_target_warnings(${name})
endfunction()

# Code that includes ODS-generated .inc files: the generated adaptors carry
# unused parameters, which LLVM itself builds with -Wno-unused-parameter.
function(llmc_mlir_target target)
  target_compile_options(${target} PRIVATE -Wno-unused-parameter)
endfunction()
