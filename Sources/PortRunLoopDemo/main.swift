import Foundation
import PortRunLoopKit

// portrunloop-demo: the seeds' scenario, run for real. Exits non-zero if any check fails.
let options = DemoOptions.parse(Array(CommandLine.arguments.dropFirst()))
var ok = true
do {
    ok = try runSeedScenario(options)
    if options.center {
        print("")
        try runCenterScenario(posterThreads: options.threads, itemsPerThread: options.items)
    }
} catch {
    FileHandle.standardError.write(Data("portrunloop-demo: \(error)\n".utf8))
    exit(1)
}
exit(ok ? 0 : 1)
