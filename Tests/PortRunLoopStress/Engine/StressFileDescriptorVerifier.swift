import Foundation
import PortRunLoopKit

/// Checks the fd part of a finished round, per pipe: the bytes the handler read are a prefix of
/// the bytes written (so: in order, none twice, none skipped, none corrupt), every byte written
/// before the pipe's cancellation point was read (unless its consumer began retiring first),
/// no handler started after `cancel()` returned, every handler ran on its loop's thread, `watch`
/// and the source failed only with `.loopShutDown` on a retiring consumer, and every fd opened was
/// closed exactly once.
///
/// Thread-safety: used by one thread after every producer, chaos and consumer thread joined.
extension StressFileDescriptors {
    func verify(into report: inout StressReport) {
        for text in problems.withLock({ $0 }) { report.violation(text) }
        let (pipes, cancellations) = registry.withLock { ($0.all, $0.cancellations) }
        let opened = fdsOpened.load(ordering: .acquiring), closed = fdsClosed.load(ordering: .acquiring)
        report.fdsOpened += opened
        report.fdsClosed += closed
        if opened != closed { report.violation("fd: \(opened) fds opened but \(closed) closed (leak)") }
        for pipe in pipes {
            let log = pipe.writer.withLock { $0 }
            let state = pipe.records.state.snapshot
            report.fdPipes += 1
            if pipe.kind == .socketpair { report.fdSocketpairs += 1 }
            report.fdWrites += log.writes
            report.fdWritesRefused += log.refused + log.full
            report.fdBytesWritten += log.bytes.count
            report.fdBytesDelivered += state.delivered.count
            for text in log.errors + state.errors { report.violation("fd \(pipe.label): \(text)") }
            checkRegistration(pipe, waived: state.waived, into: &report)
            Self.comparePrefix(pipe, written: log.bytes, delivered: state.delivered, into: &report)
            if let outcome = cancellations[pipe.id] {
                report.fdCancelled += 1
                if outcome.unreadAtCancel > 0 { report.fdCancelledWhileReady += 1 }
                if outcome.held { report.fdCancelledWhileHeld += 1 }
                let missing = outcome.sealedAt - min(state.delivered.count, outcome.sealedAt)
                if missing > 0 && !outcome.waived {
                    report.fdLost += (missing + StressPipeRecord.size - 1) / StressPipeRecord.size
                    if !outcome.drainTimedOut { // a timeout was reported when it happened
                        report.violation("fd \(pipe.label): \(missing) byte(s) written before the cancellation point were never read")
                    }
                }
            } else if pipe.source != nil && !state.waived {
                report.violation("fd \(pipe.label): neither cancelled by the engine nor by its loop's shutdown")
            }
            let after = pipe.records.marker.startedAfterCancel.load(ordering: .acquiring)
            report.fdInFlightAtCancel += pipe.records.marker.inFlightAtCancel.load(ordering: .acquiring)
            report.countViolations(after, in: \.fdRanAfterCancel,
                                   "fd \(pipe.label): \(after) handler call(s) started after cancel() returned (ran after cancel)")
            let wrong = pipe.records.wrongThread.load(ordering: .acquiring)
            report.countViolations(wrong, in: \.fdWrongThread,
                                   "fd \(pipe.label): \(wrong) handler call(s) on a thread other than c\(pipe.consumer.id)'s loop")
        }
    }

    /// `watch` may throw, and the loop may cancel the source on its own, only with `.loopShutDown`
    /// and only once the consumer began retiring.
    private func checkRegistration(_ pipe: StressPipe, waived: Bool, into report: inout StressReport) {
        if let error = pipe.watchError, !(error == .loopShutDown && waived) {
            report.violation("fd \(pipe.label): watch threw \(error)\(waived ? "" : " although its consumer was not retiring")")
        }
        if let error = pipe.source?.registrationError, !(error == .loopShutDown && waived) {
            report.violation("fd \(pipe.label): the loop cancelled the source with \(error)\(waived ? "" : " although its consumer was not retiring")")
        }
    }

    /// The delivered bytes must be a prefix of the written ones.
    static func comparePrefix(_ pipe: StressPipe, written: [UInt8], delivered: [UInt8], into report: inout StressReport) {
        let common = zip(written, delivered).prefix { $0 == $1 }.count
        guard common < delivered.count else { return }
        report.fdNotPrefix += 1
        let offset = common - common % StressPipeRecord.size
        let got = StressPipeRecord.describe(delivered, at: offset)
        let expected = common < written.count ? StressPipeRecord.describe(written, at: offset) : "nothing (only \(written.count) bytes were written)"
        report.violation("fd \(pipe.label): the bytes read are not a prefix of the bytes written: first difference at byte \(common) "
            + "(record \(offset / StressPipeRecord.size)): read \(got), written \(expected); \(delivered.count) bytes read, \(written.count) written")
    }
}
