// A stream server run out of file descriptors, for StreamListenerExhaustionTests: it lowers its
// own descriptor limit (a test process cannot, without starving the tests beside it), listens,
// takes every descriptor left, and reports on stdout:
//   LISTENING <port>          ready: connect to 127.0.0.1:<port>
//   PAUSED                    a connection is waiting and accept failed with EMFILE
//   CPU <ms> PAUSES <n>       process CPU time over the next 500 ms, still exhausted
//   RECOVERED <accepted>      descriptors freed, the waiting connection accepted (it is sent "hi")
// and exits 0; 1 with a line saying why on any failure. A 30 s watchdog bounds it.
import Foundation
import PortRunLoopKit

func say(_ line: String) {
    print(line)
    fflush(nil) // stdout is a pipe: each line goes out as it is printed
}

func fail(_ message: String) -> Never {
    say("FAILED \(message)")
    exit(1)
}

Thread.detachNewThread {
    Thread.sleep(forTimeInterval: 30)
    fail("watchdog")
}

var limit = rlimit()
getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
limit.rlim_cur = 128
guard setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { fail("setrlimit") }

let server = try RunLoopThread(name: "exhausted-server")
let accepted = DispatchSemaphore(value: 0)
let listener = try StreamListener(on: .host("127.0.0.1", port: 0), loop: server.loop) { connection in
    connection.write("hi")
    connection.close(afterFlushing: true)
    accepted.signal()
}
// Take every descriptor left.
var hogs: [Int32] = []
while true {
    let fd = open("/dev/null", O_RDONLY | O_CLOEXEC)
    if fd < 0 { break }
    hogs.append(fd)
}
guard errno == EMFILE else { fail("open stopped with errno \(errno)") }
say("LISTENING \(listener.localEndpoint.port!)")

// Wait (bounded by the watchdog) until a connection waits and an accept has failed for it.
while listener.statistics.exhaustionPauses == 0 {
    if accepted.wait(timeout: .now() + 0.005) == .success { fail("accepted while exhausted") }
}
say("PAUSED")

func cpuMilliseconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    let user = Double(usage.ru_utime.tv_sec) * 1000 + Double(usage.ru_utime.tv_usec) / 1000
    let system = Double(usage.ru_stime.tv_sec) * 1000 + Double(usage.ru_stime.tv_usec) / 1000
    return user + system
}
let before = cpuMilliseconds()
// The measurement window: the listener is exhausted throughout (nothing is freed in it).
if accepted.wait(timeout: .now() + 0.5) == .success { fail("accepted while exhausted") }
let spent = cpuMilliseconds() - before
say("CPU \(Int(spent.rounded())) PAUSES \(listener.statistics.exhaustionPauses)")

for fd in hogs { close(fd) }
guard accepted.wait(timeout: .now() + 10) == .success else { fail("not accepted after descriptors freed") }
say("RECOVERED \(listener.statistics.accepted)")
listener.close()
server.stop()
exit(0)
