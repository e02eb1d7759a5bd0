import Foundation

/// Command-line options of `portrunloop-demo`.
struct DemoOptions {
    var threads = 4
    var items = 2_500
    var queueLimit = 1
    var verbose = false
    var center = true
    var crossProcess = true
    var bus = true
    var streams = true

    static let usage = """
    usage: portrunloop-demo [--threads N] [--items N] [--queue-limit N] [--verbose] [--no-center] [--no-cross-process] [--no-bus] [--no-streams]
      --threads N       background threads that post (default 4)
      --items N         notifications each thread posts (default 2500)
      --queue-limit N   the port's queue limit; small values make doorbells drop (default 1)
      --verbose         print every batch, not just the first and last ones
      --no-center       skip the second scenario (the notification center)
      --no-cross-process  skip the third scenario (the poster in a second process of this program)
      --no-bus          skip the fourth scenario (distributed notifications over D-Bus between two processes)
      --no-streams      skip the fifth scenario (a TCP echo server and client on stream sockets)
    """

    /// Parses `arguments` (without the program name); exits with the usage on bad input.
    static func parse(_ arguments: [String]) -> DemoOptions {
        var options = DemoOptions()
        var rest = arguments[...]
        func number(_ flag: String) -> Int {
            guard let text = rest.popFirst(), let value = Int(text), value > 0 else {
                fail("\(flag) needs a positive whole number")
            }
            return value
        }
        while let flag = rest.popFirst() {
            switch flag {
            case "--threads": options.threads = number(flag)
            case "--items": options.items = number(flag)
            case "--queue-limit": options.queueLimit = number(flag)
            case "--verbose": options.verbose = true
            case "--no-center": options.center = false
            case "--no-cross-process": options.crossProcess = false
            case "--no-bus": options.bus = false
            case "--no-streams": options.streams = false
            case "--help", "-h": print(usage); exit(0)
            default: fail("unknown option \(flag)")
            }
        }
        return options
    }

    private static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("portrunloop-demo: \(message)\n\(usage)\n".utf8))
        exit(2)
    }
}
