/// One side of a cross-process connection's answer times: how long this side took to answer the
/// peer's last frame, which every frame it sends carries (``CrossProcessFrame/answerMicroseconds``),
/// and what a frame read from the peer says about the exchange.
///
/// The reading loop's spin needs to know whether its partner answers within microseconds
/// (``IdleSpin``). How long after its park the answer came does not tell: while the partner is
/// asleep, the answer waits for the partner's wake-up (tens of microseconds where an idle vCPU must
/// be woken: Docs/Benchmarks.md, `FirstSendAfterIdle`), and so no exchange whose two sides sleep
/// between messages would ever start spinning. The answer times tell what the exchange takes with
/// both sides awake: the partner's time from reading this side's frame to sending its answer, and
/// this side's from reading the partner's frame before to sending that one. When both are within
/// the spin's limit, spinning on both sides turns every message around in microseconds; when either
/// is not (a slow handler, a client that sends now and then), spinning on either side waits in
/// vain.
///
/// Thread-safety: a value type; each connection keeps one under its lock.
struct AnswerTiming {
    /// When the peer's last frame was read (monotonic seconds).
    private var lastReadAt = -Double.infinity
    /// The answer time this side's last frame carried.
    private var lastSent = CrossProcessFrame.noAnswer

    /// The answer time for a frame sent at `now`: microseconds since the peer's last frame was
    /// read, ``CrossProcessFrame/noAnswer`` when none was read or it is longer than a `UInt32`
    /// holds.
    mutating func answerTime(sendingAt now: Double) -> UInt32 {
        let micros = (now - lastReadAt) * 1e6
        lastSent = micros >= 0 && micros < Double(CrossProcessFrame.noAnswer) ? UInt32(micros) : CrossProcessFrame.noAnswer
        return lastSent
    }

    /// A frame of the peer, read at `now`, carried `peerAnswer`: returns how soon the exchange
    /// turns around with both sides awake, in seconds (the longer of the peer's answer time and
    /// this side's before it; infinity when either is unknown).
    mutating func read(at now: Double, peerAnswer: UInt32) -> Double {
        lastReadAt = now
        let longer = max(peerAnswer, lastSent)
        return longer == CrossProcessFrame.noAnswer ? .infinity : Double(longer) / 1e6
    }

    /// A frame read earlier on another thread reached the code that answers it at `now` (an async
    /// request's task, resumed after the reader thread read its reply): this side's answer time
    /// counts from here, not from the read, so the hop between the threads is not taken for a
    /// slow answer.
    mutating func delivered(at now: Double) {
        lastReadAt = max(lastReadAt, now)
    }
}
