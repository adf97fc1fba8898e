# Installing libcsched: the shared library, its headers under include/csched/
# (nothing under include/grpc/, which is gRPC's), a pkg-config file and a
# CMake package (find_package(csched) -> csched::csched).
set(CS_CLIENT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/csched)

install(TARGETS csched EXPORT cschedTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT client
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT client)
install(FILES
  ${CMAKE_CURRENT_SOURCE_DIR}/include/csched/client.h
  ${CS_CLIENT_INC}/csched/scheduler.h
  ${CS_CLIENT_INC}/csched/health.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/csched COMPONENT client)
install(FILES ${CS_CLIENT_INC}/csched/v1/scheduler.pb-c.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/csched/v1 COMPONENT client)
install(FILES ${CS_CLIENT_INC}/csched/grpc/health/v1/health.pb-c.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/csched/grpc/health/v1 COMPONENT client)

# The .pc file finds its prefix from where it lies, so an installed tree
# can be moved.
file(RELATIVE_PATH CS_PC_TO_PREFIX /p/${CMAKE_INSTALL_LIBDIR}/pkgconfig /p)
configure_file(${CMAKE_CURRENT_SOURCE_DIR}/csched.pc.in ${CMAKE_CURRENT_BINARY_DIR}/csched.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/csched.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT client)

include(CMakePackageConfigHelpers)
install(EXPORT cschedTargets NAMESPACE csched:: DESTINATION ${CS_CLIENT_CMAKE_DIR}
  COMPONENT client)
configure_package_config_file(${CMAKE_CURRENT_SOURCE_DIR}/cschedConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/cschedConfig.cmake INSTALL_DESTINATION ${CS_CLIENT_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/cschedConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/cschedConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/cschedConfigVersion.cmake DESTINATION ${CS_CLIENT_CMAKE_DIR}
  COMPONENT client)
