import Foundation
import PortRunLoopKit

// portrunloop-demo: Apple's thread-targeted notifications, run for real. Exits non-zero if any check fails.
if CommandLine.arguments.dropFirst().first == "--cross-process-poster" {
    runCrossProcessPoster(Array(CommandLine.arguments.dropFirst(2)))
}
if CommandLine.arguments.dropFirst().first == "--bus-child" {
    runBusChild(Array(CommandLine.arguments.dropFirst(2)))
}
let options = DemoOptions.parse(Array(CommandLine.arguments.dropFirst()))
var ok = true
do {
    ok = try runRedirectorScenario(options)
    if options.center {
        print("")
        try runCenterScenario(posterThreads: options.threads, itemsPerThread: options.items)
    }
    if options.crossProcess {
        print("")
        ok = try runCrossProcessScenario(options) && ok
    }
    if options.bus {
        print("")
        ok = runBusScenario(posterThreads: 2, itemsPerThread: 1_000, pacedRoundTrips: 200) && ok
    }
    if options.streams {
        print("")
        ok = try runStreamScenario() && ok
    }
} catch {
    FileHandle.standardError.write(Data("portrunloop-demo: \(error)\n".utf8))
    exit(1)
}
exit(ok ? 0 : 1)
