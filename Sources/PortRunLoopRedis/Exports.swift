// Re-exported so that `import PortRunLoopRedis` alone brings BusNotificationCenter and its types.
@_exported import PortRunLoopBus
