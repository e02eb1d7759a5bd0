/// The ways one input is fed to a decoder that reads a stream: whole, one byte at a time, and
/// cut into pieces at points drawn from a generator seeded by the input itself (so that a run is
/// deterministic: the same input is always cut the same way). Every fuzz target and every split
/// test cuts its input here.
///
/// A plan is a list of cut points, ascending, each strictly inside the input: `[]` is the input
/// whole, `[1, 2, …, n-1]` one byte at a time.
///
/// Thread-safety: a stateless namespace.
package enum ByteSplits {
    /// The plans a fuzz target feeds every input in: whole, one byte at a time, and
    /// `randomPlans` plans of random cuts seeded by the input's bytes.
    package static func plans(for bytes: UnsafeRawBufferPointer, randomPlans: Int = 2) -> [[Int]] {
        var generator = SplitMix64(seed: seed(of: bytes))
        var plans: [[Int]] = [[], oneByteAtATime(bytes.count)]
        for _ in 0..<randomPlans { plans.append(randomCuts(bytes.count, using: &generator)) }
        return plans
    }

    /// Every cut point: the input one byte at a time.
    package static func oneByteAtATime(_ count: Int) -> [Int] {
        count > 1 ? Array(1..<count) : []
    }

    /// Up to `maximumPieces` pieces at random points (none for fewer than two bytes).
    package static func randomCuts(_ count: Int, maximumPieces: Int = 16, using generator: inout some RandomNumberGenerator) -> [Int] {
        guard count > 1 else { return [] }
        let cuts = Int.random(in: 1...min(maximumPieces - 1, count - 1), using: &generator)
        return Set((0..<cuts).map { _ in Int.random(in: 1..<count, using: &generator) }).sorted()
    }

    /// The pieces `cuts` makes of `bytes`, in order (views into `bytes`).
    package static func pieces(of bytes: UnsafeRawBufferPointer, cuts: [Int]) -> [UnsafeRawBufferPointer] {
        var pieces: [UnsafeRawBufferPointer] = []
        pieces.reserveCapacity(cuts.count + 1)
        var start = 0
        for end in cuts + [bytes.count] where end > start {
            pieces.append(UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
            start = end
        }
        if pieces.isEmpty { pieces.append(UnsafeRawBufferPointer(rebasing: bytes[0..<0])) }
        return pieces
    }

    /// A seed made of the bytes (FNV-1a, 64 bits).
    package static func seed(of bytes: UnsafeRawBufferPointer) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        return hash
    }
}

/// SplitMix64: a small seeded generator (deterministic across runs and platforms).
///
/// Thread-safety: a value type.
package struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    /// A generator that starts from `seed`.
    package init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
