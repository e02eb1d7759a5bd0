import Foundation
import PortRunLoopStressEngine

var config = StressConfiguration(seed: StressConfiguration.seedFromEnvironment())
config.notifications = false
if let d = ProcessInfo.processInfo.environment["RT"] { config.roundTimeout = Double(d)! }
if let d = ProcessInfo.processInfo.environment["DUR"] { config.duration = Double(d) }
if let d = ProcessInfo.processInfo.environment["ITEMS"] { config.itemsPerProducer = Int(d)! }
print("starting: \(config)")
let report = StressEngine.run(config) { print($0) }
print(report)
exit(report.passed ? 0 : 1)
