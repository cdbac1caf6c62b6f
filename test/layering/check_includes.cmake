# Fails if a source under runtime/ or backends/ includes a header of the
# compiler half: frontend/ (llmc/config, llmc/weights, llmc/import), ir/,
# passes/, or MLIR/LLVM. Run as: cmake -DROOT=<source dir> -P check_includes.cmake
if(NOT ROOT)
  message(FATAL_ERROR "pass -DROOT=<llmc source dir>")
endif()
set(forbidden
  "llmc/(config|weights|import|IR|Passes)/"
  "mlir/"
  "llvm/"
  "frontend/")
file(GLOB_RECURSE sources
  ${ROOT}/runtime/*.cpp ${ROOT}/runtime/*.h ${ROOT}/runtime/*.inc
  ${ROOT}/backends/*.cpp ${ROOT}/backends/*.h ${ROOT}/backends/*.cu
  ${ROOT}/backends/*.cuh)
set(bad "")
foreach(f ${sources})
  file(STRINGS ${f} includes REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"]")
  foreach(line ${includes})
    foreach(pattern ${forbidden})
      if(line MATCHES "[<\"]${pattern}")
        file(RELATIVE_PATH rel ${ROOT} ${f})
        list(APPEND bad "${rel}: ${line}")
      endif()
    endforeach()
  endforeach()
endforeach()
list(LENGTH sources n)
if(bad)
  string(REPLACE ";" "\n  " list "${bad}")
  message(FATAL_ERROR "the runtime and the backends must not include compiler "
    "headers (frontend/, ir/, passes/, MLIR, LLVM):\n  ${list}")
endif()
message(STATUS "${n} runtime and backend sources include no compiler header")
