# Install rules: `cmake --install build --prefix P` puts
#   P/include/quick/*.h                    the public headers
#   P/lib/libquick.a                       the library (static)
#   P/bin/quick                            the tool (unless QUICK_BUILD_TOOL=OFF)
#   P/share/quick/migrations/*.sql         the schema for psql users, in the README's order:
#   P/share/quick/sql/functions/*.sql        migrations, then functions, then views
#   P/share/quick/sql/views.sql
#   P/lib/cmake/quick/                     find_package(quick CONFIG) -> quick::quick
#   P/lib/pkgconfig/quick.pc               pkg-config --static --cflags --libs quick
# (lib is CMAKE_INSTALL_LIBDIR: lib/<multiarch> when configured with the prefix /usr.)
# Every file is relocatable: none names P, so --prefix may differ from CMAKE_INSTALL_PREFIX.
include(CMakePackageConfigHelpers)

set(QUICK_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/quick)

install(TARGETS quick_pg EXPORT quickTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/quick DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")
if(QUICK_BUILD_TOOL)
  install(TARGETS quick_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
# sql/queries/ is not installed: those are the library's own statements, compiled into it.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/migrations/ DESTINATION ${CMAKE_INSTALL_DATADIR}/quick/migrations
        FILES_MATCHING PATTERN "*.sql")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/sql/functions/ DESTINATION ${CMAKE_INSTALL_DATADIR}/quick/sql/functions
        FILES_MATCHING PATTERN "*.sql")
install(FILES ${PROJECT_SOURCE_DIR}/sql/views.sql DESTINATION ${CMAKE_INSTALL_DATADIR}/quick/sql)

# The CMake package.
install(EXPORT quickTargets NAMESPACE quick:: FILE quickTargets.cmake DESTINATION ${QUICK_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/quickConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/quickConfig.cmake INSTALL_DESTINATION ${QUICK_CMAKE_DIR})
# Before 1.0 a minor release may break the API, so 0.1 accepts only 0.1.x.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/quickConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/quickConfig.cmake ${PROJECT_BINARY_DIR}/quickConfigVersion.cmake
        DESTINATION ${QUICK_CMAKE_DIR})

# quick.pc finds its prefix from its own place (${pcfiledir}), as the CMake files do.
file(RELATIVE_PATH QUICK_PC_TO_PREFIX /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
string(REGEX REPLACE "/$" "" QUICK_PC_TO_PREFIX "${QUICK_PC_TO_PREFIX}")
# libpq is named with -lpq rather than in Requires: Debian's libpq.pc lists, for a static libpq,
# libraries Debian does not ship (-lpgcommon, -lpgport), which `pkg-config --static` would pass on.
# quick links the shared libpq, so its directory and -lpq are what a user needs.
list(JOIN QUICK_LIBPQ_LIBRARY_DIRS " -L" QUICK_PC_LIBPQ_DIRS)
if(QUICK_PC_LIBPQ_DIRS)
  set(QUICK_PC_LIBPQ_DIRS "-L${QUICK_PC_LIBPQ_DIRS} ")
endif()
list(JOIN QUICK_LIBPQ_INCLUDE_DIRS " -I" QUICK_PC_LIBPQ_INCLUDES)
if(QUICK_PC_LIBPQ_INCLUDES)
  set(QUICK_PC_LIBPQ_INCLUDES " -I${QUICK_PC_LIBPQ_INCLUDES}")
endif()
# cpp-httplib the same way: its quick.pc entry would be Requires.private, and Debian's
# cpp-httplib.pc requires openssl, zlib and brotli there, which `pkg-config --static` would make
# every user link although the shared libcpp-httplib already does.
list(JOIN QUICK_HTTPLIB_LIBRARY_DIRS " -L" QUICK_PC_HTTPLIB_LIBS)
if(QUICK_PC_HTTPLIB_LIBS)
  set(QUICK_PC_HTTPLIB_LIBS "-L${QUICK_PC_HTTPLIB_LIBS} ")
endif()
string(APPEND QUICK_PC_HTTPLIB_LIBS "-lcpp-httplib")
configure_file(${PROJECT_SOURCE_DIR}/cmake/quick.pc.in ${PROJECT_BINARY_DIR}/quick.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/quick.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
