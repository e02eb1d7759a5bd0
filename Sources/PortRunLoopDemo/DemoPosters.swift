import Foundation

/// Posts `items` numbered ``Foundation/Notification/Name/demoItem`` notifications on
/// `NotificationCenter.default` from each of `threads` threads named `poster-N` (userInfo: the
/// poster, the sequence number, the monotonic time of the post), and returns once all are posted.
///
/// Thread-safety: any thread; blocks until the posters finish.
func postDemoItems(threads: Int, items: Int) {
    let posters = DispatchGroup()
    for poster in 0..<threads {
        posters.enter()
        let thread = Thread {
            for seq in 0..<items {
                NotificationCenter.default.post(name: .demoItem, object: nil,
                                                userInfo: ["poster": poster, "seq": seq, "at": monotonicNanoseconds()])
            }
            posters.leave()
        }
        thread.name = "poster-\(poster)"
        thread.start()
    }
    posters.wait()
}
