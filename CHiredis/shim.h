// hiredis, the Redis C client, for PortRunLoopRedis: its async API (redisAsyncContext) with the
// event-library hooks (addRead/delRead/addWrite/delWrite/cleanup) mapped onto a PortRunLoop's fd
// sources by PortRunLoopRedis itself, so each connection runs on the loop's own thread.
#ifndef PORTRUNLOOP_CHIREDIS_SHIM_H
#define PORTRUNLOOP_CHIREDIS_SHIM_H

#include <hiredis/hiredis.h>
#include <hiredis/async.h>

#endif
