#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// libdispatch's private hooks for CoreFoundation's run loop (exported by libdispatch on Linux;
// CFRunLoop uses them to serve the main queue). Declared here rather than in CLibEvent's shim,
// which holds <event2/...> headers only. Both take and return plain integers/pointers, for which
// the Swift and C calling conventions agree.

/// `dispatch_runloop_handle_t _dispatch_get_main_queue_handle_4CF(void)`: on Linux an eventfd
/// (non-blocking) that libdispatch writes to whenever the main queue gets work.
@_silgen_name("_dispatch_get_main_queue_handle_4CF")
private func _dispatchGetMainQueueHandle() -> Int32

/// `void _dispatch_main_queue_callback_4CF(void *)`: drains the main queue (the blocks queued so
/// far) on the main thread. Ignores re-entrant calls; pokes the eventfd again if work remains.
@_silgen_name("_dispatch_main_queue_callback_4CF")
private func _dispatchMainQueueCallback(_ message: UnsafeMutableRawPointer?)

extension PortRunLoop {
    /// Makes this (the main thread's) loop serve `DispatchQueue.main`, and with it `@MainActor`
    /// jobs (Swift's main executor on Linux is the main dispatch queue): it watches libdispatch's
    /// main-queue eventfd as an fd source in the common modes and drains the queue whenever it
    /// fires, exactly as CFRunLoop does. So `PortRunLoop.main.run()` can be a program's entry point.
    ///
    /// Like CFRunLoop's main loop, the main loop's common modes are therefore never empty: `run()`
    /// on the main thread runs until ``stop()`` instead of returning when nothing else is scheduled.
    /// Main-queue blocks do not run in private modes (`.synchronousWait`) or in modes that are not
    /// common, and — libdispatch's own rule — not inside a nested run started from a main-queue block.
    ///
    /// When the process already handed its main thread to `dispatchMain()` (an `async` `main`, or
    /// a test runner), libdispatch serves the main queue itself and has no handle (-1): then there
    /// is nothing to watch, and the main loop is left as it is. `dispatchMain()` disposes of the
    /// handle (closes the eventfd) when the main thread enters it, which can happen while another
    /// thread makes the main loop: so the handle is asked for again after watching it, and a
    /// handle gone meanwhile leaves nothing watched (the watch refused as not open, or cancelled).
    ///
    /// Called once, when the main loop is created (from any thread). `handle` is
    /// `_dispatch_get_main_queue_handle_4CF` (a parameter for the tests of that race).
    func drainingMainDispatchQueue(handle: () -> Int32 = { _dispatchGetMainQueueHandle() }) -> PortRunLoop {
        let fd = handle()
        guard fd >= 0 else { return self }
        let source: FileDescriptorSource
        do {
            source = try watch(fileDescriptor: fd, for: .read, inModes: [.common]) { _ in
                // Reset the eventfd first (libdispatch never reads it), then drain: work queued
                // during the drain writes it again, so nothing is missed.
                var counter: UInt64 = 0
                _ = read(fd, &counter, MemoryLayout<UInt64>.size)
                _dispatchMainQueueCallback(nil)
            }
        } catch {
            // Closed by `dispatchMain()` between the two calls: libdispatch serves the queue.
            guard handle() >= 0 else { return self }
            fatalError("PortRunLoop: could not watch libdispatch's main-queue eventfd \(fd): \(error)")
        }
        // Closed by `dispatchMain()` right after it was watched: the number may be reused.
        if handle() < 0 { source.cancel() }
        return self
    }
}
