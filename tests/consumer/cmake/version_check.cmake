# cmake -DFILE=posencConfigVersion.cmake -DPACKAGE_FIND_VERSION=... [...] -P version_check.cmake
# Evaluates an installed version file the way find_package does (with the PACKAGE_FIND_* variables
# given on the command line) and prints TRUE or FALSE: whether the request is met.
include("${FILE}")
if(PACKAGE_VERSION_COMPATIBLE AND NOT PACKAGE_VERSION_UNSUITABLE)
  message("TRUE")
else()
  message("FALSE")
endif()
