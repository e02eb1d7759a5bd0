import Foundation
import PortRunLoopKit
import PortRunLoopStressEngine
import Testing

/// The shortest failing sequences the randomized model test found, kept as fixed
/// cases so each fixed core bug stays fixed whatever seeds a later run draws. Each sequence runs on
/// a fresh loop, then the model's drain; the seed only sets the ports' queue limits (1...3).
@Suite(.timeLimit(.minutes(1))) struct ModelRegressionTests {
    private func expectPasses(_ ops: [ModelOp], seed: UInt64, _ bug: String,
                              sourceLocation: SourceLocation = #_sourceLocation) {
        let result = ModelChecker.check(ops, seed: seed)
        if !result.passed {
            Issue.record(Comment(rawValue: "\(bug)\n" + result.violations.joined(separator: "\n")
                + "\ntrace:\n" + result.trace.joined(separator: "\n")), sourceLocation: sourceLocation)
        }
    }

    @Test func aPortRemovedByItsOwnHandlerGetsNoMoreDeliveries() {
        expectPasses([.send(port: 1), .onNextDelivery(port: 1, actions: [.removePort(port: 1, mode: .default)]), .send(port: 1)],
                     seed: 399_629_972_875_077_129,
                     "the rest of the batch was delivered after remove() returned, in a mode the port was no longer in (M1/M4)")
    }

    @Test func theRestOfABatchGoesBackToTheQueueAndCountsAgainstTheLimit() {
        expectPasses([.perform(modes: [.common], actions: [.addPort(port: 1, mode: .default), .send(port: 1)]),
                      .send(port: 1), .addPort(port: 1, mode: .b),
                      .onNextDelivery(port: 1, actions: [.removePort(port: 1, mode: .default), .send(port: 1)]),
                      .run(mode: .default, kind: .poll(returnAfterSourceHandled: false)), .send(port: 1)],
                     seed: 6_765_115_879_459_104_138,
                     "messages taken for delivery and put back must count against the queue limit again (M2)")
    }

    @Test func aNestedRunContinuesTheBatchOfThePortWhoseHandlerStartedIt() {
        expectPasses([.perform(modes: [.common], actions: [.send(port: 0)]), .send(port: 0),
                      .onNextDelivery(port: 0, actions: [.run(mode: .default, kind: .poll(returnAfterSourceHandled: false))])],
                     seed: 14_187_798_599_542_384_153,
                     "a nested run in the port's mode must deliver the rest of its batch (R8)")
    }

    @Test func aNestedRunOfAnotherModeDoesNotSwallowADueTimer() {
        expectPasses([.addTimer(kind: .pastOneShot, mode: .common, actions: []), .perform(modes: [.common], actions: []),
                      .addTimer(kind: .pastRepeating, mode: .default, actions: [.run(mode: .a, kind: .poll(returnAfterSourceHandled: false))]),
                      .addPort(port: 1, mode: .a)],
                     seed: 14_957_378_720_258_550_676,
                     "a timer libevent reported during a nested run of another mode was dropped (T5/R4)")
    }

    @Test func aOneShotTimerDoesNotFireAgainInsideItsOwnBlock() {
        expectPasses([.addTimer(kind: .pastOneShot, mode: .common, actions: [.run(mode: .b, kind: .beforePast)]), .addCommonMode(.b)],
                     seed: 14_321_079_974_287_180_836,
                     "a nested run started by a one-shot timer's block fired the same timer again (T2)")
    }

    @Test func aNestedRunOfAnotherModeDoesNotSwallowFdReadiness() {
        expectPasses([.addPort(port: 2, mode: .default), .watchPipe(mode: .a), .writePipe,
                      .addTimer(kind: .pastOneShot, mode: .a, actions: [.run(mode: .default, kind: .poll(returnAfterSourceHandled: false))])],
                     seed: 17_140_305_517_477_064_324,
                     "fd readiness reported during a nested run of another mode was dropped (F2/R4)")
    }

    @Test func aPollingRunFiresDueTimersAndServesReadyFds() {
        expectPasses([.addTimer(kind: .pastOneShot, mode: .default, actions: []), .watchPipe(mode: .default), .writePipe,
                      .run(mode: .default, kind: .poll(returnAfterSourceHandled: false)),
                      .run(mode: .default, kind: .beforePast)],
                     seed: 1,
                     "a run whose deadline has passed must still handle due timers and ready fds (R4, T5)")
    }

    @Test func aNestedRunOfAnotherModeKeepsTheReadinessItsOuterRunQueued() {
        expectPasses([.writePipe, .watchPipe(mode: .default), .perform(modes: [.common], actions: [.addPort(port: 2, mode: .default)]),
                      .send(port: 2), .addTimer(kind: .pastOneShot, mode: .a, actions: []),
                      .onNextDelivery(port: 2, actions: [.run(mode: .a, kind: .poll(returnAfterSourceHandled: false))])],
                     seed: 12_768_804_783_255_334_716,
                     "fd readiness the outer run had queued was lost to a nested run of another mode (R4/R8)")
    }
}
