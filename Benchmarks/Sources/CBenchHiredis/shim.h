// hiredis for the benchmarks' Redis floor (PUBLISH and SUBSCRIBE between two processes through a
// redis-server the benchmark starts). Only the library's own header here. No pkgConfig in
// Package.swift: hiredis.pc adds -D_FILE_OFFSET_BITS=64, which SwiftPM warns about on every build;
// the header is in the default include path and this module map links the library.
#ifndef PORTRUNLOOP_CBENCHHIREDIS_SHIM_H
#define PORTRUNLOOP_CBENCHHIREDIS_SHIM_H

#include <hiredis/hiredis.h>

#endif
