# Writes the header of `traincc --version` (cmake -P, at every build): the
# commit is read now, not when CMake configured, so it follows new commits.
# The file is rewritten only when its contents change, so nothing
# recompiles for an unchanged commit.
#
# Inputs: SOURCE_DIR, OUTPUT, VERSION, LLVM_VERSION.
find_package(Git QUIET)
set(commit "unknown")
if(GIT_FOUND)
  execute_process(COMMAND ${GIT_EXECUTABLE} -C ${SOURCE_DIR} rev-parse
                          --short=12 HEAD
                  OUTPUT_VARIABLE head RESULT_VARIABLE result
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(result EQUAL 0)
    set(commit "${head}")
    execute_process(COMMAND ${GIT_EXECUTABLE} -C ${SOURCE_DIR} diff --quiet
                            HEAD --
                    RESULT_VARIABLE modified ERROR_QUIET)
    if(NOT modified EQUAL 0)
      string(APPEND commit "+modified")
    endif()
  endif()
endif()
file(CONFIGURE OUTPUT "${OUTPUT}" CONTENT
"#define TRAINCC_VERSION \"${VERSION}\"
#define TRAINCC_COMMIT \"${commit}\"
#define TRAINCC_LLVM_VERSION \"${LLVM_VERSION}\"
" @ONLY)
