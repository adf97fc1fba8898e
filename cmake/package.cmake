# The Debian package: `cpack -G DEB` in a build dir makes
# csched_VERSION_ARCH.deb with cschedd, csched-minder, csched, libcsched (with
# its headers) and the systemd unit, under /usr. docs/deploy.md, "Debian
# package".

# The unit names cschedd where this install puts it: ExecStart is rewritten
# when the prefix is known, at install time (cmake --install --prefix, or
# cpack's /usr).
set(CS_UNIT_SRC ${PROJECT_SOURCE_DIR}/deploy/systemd/cschedd.service)
set(CS_UNIT_OUT ${CMAKE_BINARY_DIR}/cschedd.service)
install(CODE "
  file(READ \"${CS_UNIT_SRC}\" unit)
  string(REPLACE \"/usr/local/bin/cschedd\"
         \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}/cschedd\" unit \"\${unit}\")
  file(WRITE \"${CS_UNIT_OUT}\" \"\${unit}\")")
install(FILES ${CS_UNIT_OUT} DESTINATION lib/systemd/system)
install(FILES ${PROJECT_SOURCE_DIR}/deploy/systemd/cschedd.service.d/run-as-users.conf
  DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME csched)
set(CPACK_PACKAGE_CONTACT "csched maintainers <csched@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "job scheduler service: cschedd, csched-minder, the csched CLI and libcsched")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
# The shared libraries (libgrpc29, libuv1, libpq5, ...) from dpkg-shlibdeps;
# the rest of deploy/install-deps.sh --runtime by hand: ps and runuser,
# the time zones, the CAs, useradd for postinst. PostgreSQL's server is only
# for the embedded database: a replica on a shared PostgreSQL goes without
# (apt-get install --no-install-recommends).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "procps, util-linux, tzdata, ca-certificates, passwd")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "postgresql-15")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${CMAKE_CURRENT_LIST_DIR}/deb/postinst)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
