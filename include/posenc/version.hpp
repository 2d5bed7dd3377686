// The version of posenc these headers belong to (semantic versioning: while the major version is
// 0, a new minor version may change the API and the ABI of the posenc_kernels library).
//
// Written by hand rather than generated, so that the source tree is usable with nothing but
// -I<posenc>/include; meson.build refuses to configure when these numbers differ from
// project(version: ...), so the two cannot drift apart.
#pragma once

#define POSENC_VERSION_MAJOR 0
#define POSENC_VERSION_MINOR 4
#define POSENC_VERSION_PATCH 0
#define POSENC_VERSION_STRING "0.4.0"
