# quick_write_if_changed(PATH CONTENT): writes CONTENT to PATH only when it differs from what PATH
# holds, so that the generated files' dependants are not rebuilt needlessly. For the generators
# run with cmake -P (EmbedSql.cmake, EmbedDashboardPage.cmake).
function(quick_write_if_changed path content)
  set(existing "")
  if(EXISTS "${path}")
    file(READ "${path}" existing)
  endif()
  if(NOT existing STREQUAL "${content}")
    file(WRITE "${path}" "${content}")
  endif()
endfunction()
