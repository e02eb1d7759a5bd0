// Re-exported so that every test that imports the test support also has the child processes and
// private daemons (StreamingProcess, PrivateBus, RedisServer) the soak tool shares with the tests.
@_exported import PortRunLoopDaemons
