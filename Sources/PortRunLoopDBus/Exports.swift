// Re-exported so that `import PortRunLoopDBus` alone brings BusNotificationCenter and its types.
@_exported import PortRunLoopBus
