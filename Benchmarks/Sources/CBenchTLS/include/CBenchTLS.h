// The module's umbrella header: every header of the target, listed (see CBenchNative.h for why).
#ifndef PORTRUNLOOP_CBENCHTLS_H
#define PORTRUNLOOP_CBENCHTLS_H

#include "cbench_tls_client.h"
#include "cbench_tls_server.h"

#endif
