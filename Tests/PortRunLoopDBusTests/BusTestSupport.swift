import Foundation
import Logging
import PortRunLoopDBus
import PortRunLoopKit
import PortRunLoopTestSupport

/// A center on a private bus, its connection running on a loop thread of its own; closed and its
/// thread stopped by ``shutDown()``.
final class BusFixture: @unchecked Sendable {
    let bus: PrivateBus
    let thread: RunLoopThread
    let center: BusNotificationCenter

    init(heldNotificationLimit: Int = BusNotificationCenter.defaultHeldNotificationLimit, bus: PrivateBus? = nil,
         logger: Logger = BusNotificationCenter.disabledLogger) throws {
        self.bus = try bus ?? PrivateBus()
        thread = try RunLoopThread(name: "bus-center")
        center = try BusNotificationCenter(endpoint: self.bus.endpoint, loop: thread.loop,
                                           logger: logger, heldNotificationLimit: heldNotificationLimit)
    }

    /// Another center on the same bus, on the same loop thread (another "process" on the bus).
    func secondCenter() throws -> BusNotificationCenter {
        try BusNotificationCenter(endpoint: bus.endpoint, loop: thread.loop)
    }

    /// A round trip through the bus: returns once everything `center` posted before has been
    /// received back (the bus keeps one sender's order).
    func sync(_ other: BusNotificationCenter? = nil) throws {
        let poster = other ?? center
        let token = "sync-\(UUID().uuidString)"
        let seen = Collector<Int>()
        let observation = try center.addObserver(forName: .init(token), suspensionBehavior: .deliverImmediately, on: thread.loop) { _ in
            seen.append(1)
        }
        try poster.post(name: .init(token), deliverImmediately: true)
        let cameBack = seen.wait(for: 1)
        observation.remove()
        guard cameBack else { throw PrivateBusError.roundTripTimedOut }
    }

    /// What `dbus-monitor`, watching this bus for notifications, prints for what `post` sends (see
    /// ``StreamingProcess/output(posting:until:)``).
    func monitoredOutput(posting post: (Int) throws -> Void, until marker: String) throws -> String? {
        let monitor = try StreamingProcess.monitor(address: bus.address,
                                                   rule: "type='signal',interface='org.portrunloop.DistributedNotification'")
        defer { monitor.stop() }
        return try monitor.output(posting: post, until: marker)
    }

    func shutDown() {
        center.close()
        thread.stop()
        bus.stop()
    }
}

extension StreamingProcess {
    /// `dbus-monitor` on a private bus, for signals matching `rule`.
    static func monitor(address: String, rule: String) throws -> StreamingProcess {
        try StreamingProcess("/usr/bin/dbus-monitor", ["--address", address, rule])
    }

    /// A monitor's view of what `post` sends: posts (`post(attempt)`) until the monitor prints
    /// `marker` (it is ready once it prints what we post; at most 50 attempts of 0.2 s), waits for
    /// that signal's last argument (`boolean false`), and returns the output on one line, single
    /// spaces; nil when the monitor never printed `marker`.
    func output(posting post: (Int) throws -> Void, until marker: String) throws -> String? {
        var seen = false
        for attempt in 0..<50 where !seen {
            try post(attempt)
            seen = wait(for: marker, seconds: 0.2)
        }
        guard seen, wait(for: "boolean false", seconds: 5) else { return nil }
        return output.replacingOccurrences(of: "\n", with: " ")
            .split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
    }
}
