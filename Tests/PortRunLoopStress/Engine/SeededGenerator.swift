/// A small, fast, seedable random number generator (xoshiro256** seeded through SplitMix64), so a
/// stress run or a model-test case can be replayed exactly from its printed seed.
///
/// Thread-safety: a value type; each thread uses its own copy (`Sendable`).
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var s0: UInt64, s1: UInt64, s2: UInt64, s3: UInt64

    /// A generator whose whole sequence is determined by `seed`.
    ///
    /// Thread-safety: a value type.
    public init(seed: UInt64) {
        var sm = seed
        func splitMix(_ x: inout UInt64) -> UInt64 {
            x &+= 0x9E37_79B9_7F4A_7C15
            var z = x
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        s0 = splitMix(&sm); s1 = splitMix(&sm); s2 = splitMix(&sm); s3 = splitMix(&sm)
    }

    /// The next 64 random bits.
    ///
    /// Thread-safety: mutating; one thread at a time.
    public mutating func next() -> UInt64 {
        let result = ((s1 &* 5) << 7 | (s1 &* 5) >> 57) &* 9
        let t = s1 << 17
        s2 ^= s0; s3 ^= s1; s1 ^= s2; s0 ^= s3
        s2 ^= t
        s3 = (s3 << 45) | (s3 >> 19)
        return result
    }

    /// Derives an independent seed for sub-stream `index` of `seed` (per producer, per round, per case).
    ///
    /// Thread-safety: a pure function.
    public static func derive(_ seed: UInt64, _ index: UInt64) -> UInt64 {
        var g = SeededGenerator(seed: seed ^ (index &* 0xD1B5_4A32_D192_ED03))
        return g.next()
    }

    /// Percent chance: true with probability `percent`/100.
    ///
    /// Thread-safety: mutating; one thread at a time.
    public mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &self) < percent }
}
