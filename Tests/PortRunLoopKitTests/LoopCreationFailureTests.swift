#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PortRunLoopKit
import PortRunLoopStressEngine
import Testing

/// A loop that cannot get its descriptors (the epoll instance, the doorbell's eventfd, the wake
/// timer's timerfd) fails with a typed error from `forCurrentThread()`, whichever of them is the
/// one refused, and frees what it had made: no crash, no leak of the base under its events.
@Suite(.timeLimit(.minutes(1))) struct LoopCreationFailureTests {
    @Test func everyDescriptorRefusedGivesATypedErrorAndNoCrash() async {
        // In a process of its own: the descriptor limit is the process's.
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            // Every number up to the highest open descriptor filled (the holes with /dev/null), so
            // that the limit below leaves exactly `room` numbers free.
            let openNames = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
            let highest = openNames.compactMap { Int32($0) }.max() ?? 2
            var lowestFree: Int32 = -1
            while lowestFree <= highest {
                lowestFree = open("/dev/null", O_RDONLY)
                guard lowestFree >= 0 else { exit(2) }
            }
            close(lowestFree)
            var saved = rlimit()
            _ = getrlimit(Int32(RLIMIT_NOFILE.rawValue), &saved)
            var refused = 0, made = 0
            // Room for 0, 1, 2, … new descriptors: the first attempts fail at each step in turn,
            // the later ones succeed.
            for room in 0..<12 {
                var limited = saved
                limited.rlim_cur = rlim_t(Int(lowestFree) + room)
                guard setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limited) == 0 else { exit(3) }
                let outcome = try? JoinableThread.run(name: "limited-\(room)") { () -> Bool in
                    do {
                        let loop = try PortRunLoop.forCurrentThread()
                        return loop.isCurrentThread
                    } catch {
                        return false // a PortRunLoopError: the typed failure
                    }
                }
                guard setrlimit(Int32(RLIMIT_NOFILE.rawValue), &saved) == 0 else { exit(4) }
                if outcome == true { made += 1 } else { refused += 1 }
            }
            // Some attempts were refused (with no room at all), and a loop is made once there is room.
            exit(refused >= 1 && made >= 1 ? 0 : 5)
        }
        let childOutput = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(!childOutput.contains("Fatal error"), "stderr: \(childOutput)")
    }
}
