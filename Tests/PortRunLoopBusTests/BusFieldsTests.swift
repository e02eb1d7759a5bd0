import Foundation
import PortRunLoopBus
import Testing

/// ``BusFields`` and ``BusFieldValue`` as values: literals, look-up and update, equality, and the
/// mapping to and from the property list observers of `Notification`s receive.
@Suite struct BusFieldsTests {
    @Test func aLiteralKeepsItsOrderAndFindsEveryKey() {
        let fields: BusFields = ["b": "two", "a": 1, "c": [true, 2.5], "d": ["inner": .data(Data([1, 2]))]]
        #expect(fields.keys == ["b", "a", "c", "d"])
        #expect(fields.count == 4)
        #expect(fields["b"]?.stringValue == "two")
        #expect(fields["a"]?.intValue == 1)
        #expect(fields["c"]?.arrayValue == [.bool(true), .double(2.5)])
        #expect(fields["d"]?.dictionaryValue?["inner"]?.dataValue == Data([1, 2]))
        #expect(fields["missing"] == nil)
        #expect(fields["a"]?.stringValue == nil)
    }

    @Test func theSubscriptReplacesInPlaceAppendsAndRemoves() {
        var fields: BusFields = ["a": 1, "b": 2]
        fields["a"] = "one"
        fields["c"] = .unsignedInt(UInt64.max)
        fields["b"] = nil
        fields["absent"] = nil
        #expect(fields.keys == ["a", "c"])
        #expect(fields["a"] == .string("one"))
        #expect(fields.index(forKey: "c") == 1)
        #expect(fields["c"]?.intValue == nil)
    }

    @Test func equalityIgnoresOrderButNotValues() {
        let a: BusFields = ["x": 1, "y": "z"]
        let b: BusFields = ["y": "z", "x": 1]
        let c: BusFields = ["x": 2, "y": "z"]
        #expect(a == b)
        #expect(a != c)
        #expect(a != ["x": 1])
        #expect(BusFieldValue.int(5) != .unsignedInt(5))
    }

    /// Read off the wire, a repeated key keeps the later value at the first one's place, through
    /// the pairwise path (few entries) and the hashed one (many).
    @Test(arguments: [3, 40]) func readEntriesKeepTheLaterValueOfARepeatedKey(count: Int) {
        var entries: [BusFields.Element] = (0..<count).map { ("k\($0)", .int($0)) }
        entries.append(("k1", "again"))
        let fields = BusFields(readEntries: entries)
        #expect(fields.count == count)
        #expect(fields.keys == (0..<count).map { "k\($0)" })
        #expect(fields["k1"] == .string("again"))
        #expect(fields["k\(count - 1)"] == .int(count - 1))
    }

    @Test func thePropertyListIsWhatTheSameUserInfoDecodesTo() {
        let fields: BusFields = [
            "text": "t", "int": -3, "small": .unsignedInt(7), "big": .unsignedInt(UInt64.max), "double": 0.5,
            "flag": false, "data": .data(Data([9])), "list": [1, "a"], "nested": ["inner": 7],
        ]
        let list = fields.propertyList
        #expect(list.count == 9)
        #expect(list["text"] as? String == "t")
        #expect(list["int"] as? Int == -3)
        #expect(list["small"] as? Int == 7)
        #expect(list["big"] as? UInt64 == UInt64.max)
        #expect(list["double"] as? Double == 0.5)
        #expect(list["flag"] as? Bool == false)
        #expect(list["data"] as? Data == Data([9]))
        #expect((list["list"] as? [Any])?.count == 2)
        #expect((list["list"] as? [Any])?.last as? String == "a")
        #expect((list["nested"] as? [String: Any])?["inner"] as? Int == 7)
    }

    @Test func aDecodedPropertyListBecomesFieldsSortedByKey() {
        let dictionary: [AnyHashable: Any] = [
            "b": "text", "a": 5, "big": UInt64.max, "list": [1, "x"] as [Any], "nested": ["k": true] as [String: Any],
            "foreign": [1: "one"] as [AnyHashable: Any],
        ]
        let fields = BusFields(decodedPropertyList: dictionary)
        #expect(fields.keys == ["a", "b", "big", "foreign", "list", "nested"])
        #expect(fields["a"] == .int(5))
        #expect(fields["big"] == .unsignedInt(UInt64.max))
        #expect(fields["list"] == [1, "x"])
        #expect(fields["nested"] == ["k": true])
        // A dictionary keyed by something else than strings: keys and values alternating.
        #expect(fields["foreign"] == [1, "one"])
    }

    @Test func descriptionsReadAsSwiftLiterals() {
        let fields: BusFields = ["name": "x", "n": 2, "list": [true]]
        #expect(fields.description == #"["name": "x", "n": 2, "list": [true]]"#)
        #expect(BusFields().description == "[:]")
    }

    @Test func aLiteralWithARepeatedKeyTraps() async {
        await #expect(processExitsWith: .failure) {
            let key = "same"
            _ = BusFields(dictionaryLiteral: (key, 1), (key, 2))
        }
    }
}
