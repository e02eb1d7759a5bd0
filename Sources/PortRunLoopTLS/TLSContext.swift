import Foundation
import PortRunLoopKit
internal import COpenSSL

/// An OpenSSL context (`SSL_CTX`) made once from a ``TLSConfiguration``: its certificate and key
/// loaded and checked against each other, its trust roots loaded, its ALPN protocols set. Make one
/// per configuration and share it: every connection made with it (any loop, any thread) uses it.
///
/// Thread-safety: `Sendable`; immutable once made (OpenSSL makes connections from a context
/// concurrently).
public final class TLSContext: @unchecked Sendable {
    /// The configuration it was made from.
    ///
    /// Thread-safety: immutable.
    public let configuration: TLSConfiguration
    /// The `SSL_CTX`, freed with the context (each connection's `SSL` holds its own reference,
    /// and its transport holds this object, so the ALPN list outlives every connection).
    let context: OpaquePointer
    /// The server's ALPN protocols the selection callback reads (nil without ALPN).
    private let serverProtocols: UnsafeMutablePointer<portrunloop_tls_alpn>?

    /// Whether the context has a certificate and key to present (a server needs one).
    var hasCertificate: Bool { configuration.certificateChain != nil }

    /// Makes the context.
    ///
    /// - Throws: `StreamConnectionError/tls(_:)` with `TLSFailure/Kind/invalidConfiguration`
    ///   when a certificate, key or root does not parse (or its file cannot be read), a key is
    ///   encrypted or does not match its certificate, only one of certificate and key is given, or
    ///   an ALPN protocol name is empty or longer than 255 bytes.
    ///
    /// Thread-safety: any thread.
    public init(_ configuration: TLSConfiguration) throws(StreamConnectionError) {
        guard let context = SSL_CTX_new(TLS_method()) else { throw Self.invalid("SSL_CTX_new failed: \(OpenSSLErrors.drain())") }
        var serverProtocols: UnsafeMutablePointer<portrunloop_tls_alpn>?
        do throws(StreamConnectionError) {
            try Self.setUp(context, configuration, serverProtocols: &serverProtocols)
        } catch {
            SSL_CTX_free(context)
            free(serverProtocols)
            throw error
        }
        self.configuration = configuration
        self.context = context
        self.serverProtocols = serverProtocols
    }

    deinit {
        SSL_CTX_free(context)
        free(serverProtocols)
    }

    private static func setUp(_ context: OpaquePointer, _ configuration: TLSConfiguration,
                              serverProtocols: inout UnsafeMutablePointer<portrunloop_tls_alpn>?) throws(StreamConnectionError) {
        ERR_clear_error()
        guard portrunloop_tls_context_setup(context, configuration.minimumVersion.openSSLValue) == 1 else {
            throw invalid("the protocol settings were refused: \(OpenSSLErrors.drain())")
        }
        switch (configuration.certificateChain, configuration.privateKey) {
        case (nil, nil):
            break
        case (let chain?, let key?):
            let chainText = try read(chain, what: "certificate chain")
            let loaded = chainText.withCString { portrunloop_tls_use_certificate_chain(context, $0, Int32(strlen($0))) }
            guard loaded > 0 else {
                throw invalid(loaded == 0 ? "the certificate chain holds no PEM certificate"
                                          : "the certificate chain does not parse: \(OpenSSLErrors.drain())")
            }
            let keyText = try read(key, what: "private key")
            guard keyText.withCString({ portrunloop_tls_use_private_key(context, $0, Int32(strlen($0))) }) == 1 else {
                throw invalid("the private key does not parse (or is encrypted): \(OpenSSLErrors.drain())")
            }
            guard SSL_CTX_check_private_key(context) == 1 else {
                throw invalid("the private key does not match the certificate: \(OpenSSLErrors.drain())")
            }
            // The chain is sent as given: without this, OpenSSL rebuilds it from the trust store
            // (a directory search) at every handshake, which made a server's handshake cost half
            // as much again as one that sends its chain directly (the TLSEcho.Handshakes row).
            portrunloop_tls_no_auto_chain(context)
        case (nil, _?):
            throw invalid("a private key without a certificate chain")
        case (_?, nil):
            throw invalid("a certificate chain without its private key")
        }
        switch configuration.trustRoots {
        case .systemDefault:
            guard SSL_CTX_set_default_verify_paths(context) == 1 else {
                throw invalid("the system's trust roots could not be loaded: \(OpenSSLErrors.drain())")
            }
        case .certificates(let source):
            let text = try read(source, what: "trust roots")
            let added = text.withCString { portrunloop_tls_add_trust_roots(context, $0, Int32(strlen($0))) }
            guard added > 0 else {
                throw invalid(added == 0 ? "the trust roots hold no PEM certificate"
                                         : "the trust roots do not parse: \(OpenSSLErrors.drain())")
            }
        }
        guard !configuration.alpnProtocols.isEmpty else { return }
        let wire = try alpnWireFormat(configuration.alpnProtocols)
        // A client offers the list; a server chooses from it (SSL_CTX_set_alpn_protos returns 0 on success).
        guard SSL_CTX_set_alpn_protos(context, wire, UInt32(wire.count)) == 0,
              let made = portrunloop_tls_alpn_new(wire, UInt32(wire.count)) else {
            throw invalid("the ALPN protocols were refused: \(OpenSSLErrors.drain())")
        }
        serverProtocols = made
        portrunloop_tls_set_alpn_server(context, made)
    }

    /// The ALPN protocol list in wire format: each name's length (one byte), then the name.
    static func alpnWireFormat(_ protocols: [String]) throws(StreamConnectionError) -> [UInt8] {
        var wire: [UInt8] = []
        for name in protocols {
            let bytes = Array(name.utf8)
            guard (1...255).contains(bytes.count) else {
                throw invalid("the ALPN protocol name \"\(name)\" is empty or longer than 255 bytes")
            }
            wire.append(UInt8(bytes.count))
            wire.append(contentsOf: bytes)
        }
        return wire
    }

    /// The PEM text of `source` (a file's content).
    private static func read(_ source: TLSConfiguration.PEMSource, what: String) throws(StreamConnectionError) -> String {
        switch source {
        case .text(let text):
            return text
        case .file(let path):
            guard let data = FileManager.default.contents(atPath: path) else {
                throw invalid("the \(what) file \(path) cannot be read")
            }
            return String(decoding: data, as: UTF8.self)
        }
    }

    static func invalid(_ reason: String) -> StreamConnectionError {
        .tls(TLSFailure(.invalidConfiguration, reason: reason))
    }
}
