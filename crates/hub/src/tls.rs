//! TLS to the hub, as libpq's `sslmode` and `sslrootcert` say, on rustls (the `ring` provider).
//!
//! What each mode checks of the hub's certificate:
//!
//! | `sslmode`     | encrypted                  | chain to `sslrootcert`      | host name |
//! |---------------|----------------------------|-----------------------------|-----------|
//! | `disable`     | no                         | no                          | no        |
//! | `allow`, `prefer` | when the hub offers TLS | only if `sslrootcert` is set | no       |
//! | `require`     | always                     | only if `sslrootcert` is set | no        |
//! | `verify-ca`   | always                     | yes (`sslrootcert` needed)  | no        |
//! | `verify-full` | always                     | yes (`sslrootcert` needed)  | yes       |
//!
//! Whatever the mode, the handshake's signatures are checked against the certificate the hub sent:
//! a mode that does not check the chain still encrypts, with keys only the holder of that
//! certificate's private key can have agreed. The host name is checked against the certificate's
//! subject alternative names (a DNS name, or an IP address when the host is one), as rustls does,
//! never its common name.
//!
//! The connection string's `sslmode` and `sslrootcert` are taken out of it here (`split`): the
//! driver (tokio-postgres) knows neither `verify-ca`, `verify-full` nor `sslrootcert`.
//!
//! Over a Unix socket there is no TLS, whatever the mode (`HubConfig` makes it `disable`).
//!
//! It never reads a default root certificate file (libpq's `~/.postgresql/root.crt`) nor the
//! system's store: a mode that verifies needs `sslrootcert` named.

use std::future::Future;
use std::io;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{verify_server_cert_signed_by_trust_anchor, verify_server_name};
use rustls::crypto::{WebPkiSupportedAlgorithms, verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::server::ParsedCertificate;
use rustls::{DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_postgres::tls::{ChannelBinding, MakeTlsConnect, TlsConnect, TlsStream};

use scrollback_core::error::{Error, Result};

/// libpq's `sslmode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SslMode {
    /// Never TLS.
    Disable,
    /// TLS when the hub offers it (tried first, as `prefer`: the driver cannot try plain first).
    Allow,
    /// TLS when the hub offers it; libpq's default.
    Prefer,
    /// TLS always; the chain checked only when `sslrootcert` is given.
    Require,
    /// TLS always, the certificate chained to `sslrootcert`.
    VerifyCa,
    /// TLS always, the certificate chained to `sslrootcert` and naming the host.
    VerifyFull,
}

impl SslMode {
    /// The mode `value` names.
    pub fn parse(value: &str) -> Result<SslMode> {
        Ok(match value {
            "disable" => SslMode::Disable,
            "allow" => SslMode::Allow,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            other => {
                return Err(Error::BadQuery(format!(
                    "sslmode {other:?}: it is one of disable, allow, prefer, require, verify-ca and verify-full"
                )));
            }
        })
    }

    /// The mode's name, as libpq spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Allow => "allow",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        }
    }

    /// The driver's mode: whether it asks for TLS, and whether it gives up without it.
    pub(crate) fn driver(self) -> tokio_postgres::config::SslMode {
        match self {
            SslMode::Disable => tokio_postgres::config::SslMode::Disable,
            SslMode::Allow | SslMode::Prefer => tokio_postgres::config::SslMode::Prefer,
            SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => tokio_postgres::config::SslMode::Require,
        }
    }
}

/// The TLS a hub connection is to have.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tls {
    /// The mode.
    pub mode: SslMode,
    /// The CA certificates (PEM) the hub's certificate must chain to.
    pub root_cert: Option<PathBuf>,
}

impl Tls {
    /// From the connection string's values, else the environment's (`PGSSLMODE`, `PGSSLROOTCERT`),
    /// else libpq's default (`prefer`, no root certificate).
    pub(crate) fn new(
        mode: Option<String>,
        root_cert: Option<String>,
        var: &impl Fn(&str) -> Option<String>,
    ) -> Result<Tls> {
        let given = |value: Option<String>, name: &str| value.or_else(|| var(name)).filter(|v| !v.is_empty());
        let from_environment = mode.is_none();
        let mode = match given(mode, "PGSSLMODE") {
            Some(mode) => SslMode::parse(&mode).map_err(|e| match from_environment {
                true => Error::BadQuery(format!("PGSSLMODE: {e}")),
                false => e,
            })?,
            None => SslMode::Prefer,
        };
        let root_cert = given(root_cert, "PGSSLROOTCERT").map(PathBuf::from);
        Ok(Tls { mode, root_cert })
    }

    /// What is checked, for messages: `sslmode=verify-full, sslrootcert=/etc/hub-ca.pem`.
    pub fn describe(&self) -> String {
        match &self.root_cert {
            Some(path) => format!("sslmode={}, sslrootcert={}", self.mode.as_str(), path.display()),
            None => format!("sslmode={}", self.mode.as_str()),
        }
    }

    /// The connector for the driver, the root certificates read now. (A mode without the file it
    /// needs is refused here, not when parsed: the file may be named where the mode is not, a
    /// variable beside a URL, and a URL is parsed alone too.)
    pub(crate) fn connector(&self) -> Result<MakeRustls> {
        if self.root_cert.as_deref() == Some(Path::new("system")) {
            return Err(Error::Hub(
                "sslrootcert=system: this scrollback does not read the system's certificate store; \
                 name the CA's PEM file (on Debian, /etc/ssl/certs/ca-certificates.crt holds them all)"
                    .into(),
            ));
        }
        if matches!(self.mode, SslMode::VerifyCa | SslMode::VerifyFull) && self.root_cert.is_none() {
            return Err(Error::Hub(format!(
                "sslmode={} needs sslrootcert (or PGSSLROOTCERT): the PEM file of the CA that signed the hub's \
                 certificate",
                self.mode.as_str()
            )));
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let roots = match &self.root_cert {
            Some(path) if self.mode != SslMode::Disable => Some(Arc::new(read_roots(path)?)),
            _ => None,
        };
        let verifier = Verifier {
            roots,
            check_name: self.mode == SslMode::VerifyFull,
            algorithms: provider.signature_verification_algorithms,
        };
        let mut config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| Error::Internal(format!("TLS to the hub: {e}")))?
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(verifier))
            .with_no_client_auth();
        // PostgreSQL 17 and later check it when the client sends one; older servers ignore it.
        config.alpn_protocols = vec![b"postgresql".to_vec()];
        Ok(MakeRustls { connector: tokio_rustls::TlsConnector::from(Arc::new(config)), tls: self.describe() })
    }
}

/// The certificates of the PEM file at `path`, each a trust anchor.
fn read_roots(path: &Path) -> Result<RootCertStore> {
    let bad = |what: String| Error::Hub(format!("sslrootcert {}: {what}", path.display()));
    let bytes = std::fs::read(path).map_err(|e| bad(format!("cannot be read: {e}")))?;
    let mut roots = RootCertStore::empty();
    for (i, cert) in CertificateDer::pem_slice_iter(&bytes).enumerate() {
        let cert = cert.map_err(|e| bad(format!("not PEM certificates: {e}")))?;
        roots.add(cert).map_err(|e| bad(format!("certificate {} is not usable as a CA: {e}", i + 1)))?;
    }
    if roots.is_empty() {
        return Err(bad("holds no PEM certificate (-----BEGIN CERTIFICATE-----)".into()));
    }
    Ok(roots)
}

/// Checks the hub's certificate as its mode says (see the module).
#[derive(Debug)]
struct Verifier {
    /// The trust anchors, when the chain is to be checked.
    roots: Option<Arc<RootCertStore>>,
    check_name: bool,
    algorithms: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        let Some(roots) = &self.roots else { return Ok(ServerCertVerified::assertion()) };
        let cert = ParsedCertificate::try_from(end_entity)?;
        verify_server_cert_signed_by_trust_anchor(&cert, roots, intermediates, now, self.algorithms.all)?;
        if self.check_name {
            verify_server_name(&cert, server_name)?;
        }
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

/// The driver's TLS connector.
#[derive(Clone)]
pub(crate) struct MakeRustls {
    connector: tokio_rustls::TlsConnector,
    /// [`Tls::describe`], for messages.
    tls: String,
}

impl<S> MakeTlsConnect<S> for MakeRustls
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Stream = RustlsStream<S>;
    type TlsConnect = RustlsConnect;
    type Error = io::Error;

    /// Never fails: the driver asks even for a Unix socket (`domain` empty), where PostgreSQL
    /// has no TLS; a name rustls cannot take fails the handshake, if there is one.
    fn make_tls_connect(&mut self, domain: &str) -> io::Result<RustlsConnect> {
        Ok(RustlsConnect { make: self.clone(), domain: domain.to_owned() })
    }
}

/// One connection's TLS handshake.
pub(crate) struct RustlsConnect {
    make: MakeRustls,
    domain: String,
}

impl<S> TlsConnect<S> for RustlsConnect
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Stream = RustlsStream<S>;
    type Error = io::Error;
    type Future = Pin<Box<dyn Future<Output = io::Result<RustlsStream<S>>> + Send>>;

    fn connect(self, stream: S) -> Self::Future {
        let RustlsConnect { make, domain } = self;
        Box::pin(async move {
            let failed =
                |e: &dyn std::fmt::Display| io::Error::other(format!("{} with the hub {domain:?}: {e}", make.tls));
            let name = ServerName::try_from(domain.clone()).map_err(|e| failed(&e))?;
            let stream = make.connector.connect(name, stream).await.map_err(|e| {
                let unknown = e.get_ref().and_then(|e| e.downcast_ref::<rustls::Error>())
                    == Some(&rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer));
                let hint = if unknown { " (no CA of sslrootcert signed the hub's certificate)" } else { "" };
                failed(&format_args!("{e}{hint}"))
            })?;
            Ok(RustlsStream(Box::new(stream)))
        })
    }
}

/// A TLS stream to the hub.
pub(crate) struct RustlsStream<S>(Box<tokio_rustls::client::TlsStream<S>>);

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncRead for RustlsStream<S> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut *self.0).poll_read(cx, buf)
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncWrite for RustlsStream<S> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut *self.0).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut *self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut *self.0).poll_shutdown(cx)
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> TlsStream for RustlsStream<S> {
    /// `tls-server-end-point` (RFC 5929): the hub's certificate hashed with its signature's hash
    /// (SHA-256 in place of MD5 and SHA-1), which SCRAM-SHA-256-PLUS binds the password exchange
    /// to. None for a signature without one hash (Ed25519, RSA-PSS): the exchange is then plain
    /// SCRAM, as the server would not bind it either.
    fn channel_binding(&self) -> ChannelBinding {
        let (_, session) = self.0.get_ref();
        let end_point = session.peer_certificates().and_then(|certs| certs.first()).and_then(|cert| {
            let hash = signature_hash(cert)?;
            Some(ring::digest::digest(hash, cert).as_ref().to_vec())
        });
        end_point.map_or_else(ChannelBinding::none, ChannelBinding::tls_server_end_point)
    }
}

/// The hash of a DER certificate's `signatureAlgorithm`, as RFC 5929 uses it.
fn signature_hash(cert: &[u8]) -> Option<&'static ring::digest::Algorithm> {
    let (certificate, _) = der(cert, 0x30)?;
    let (_tbs, rest) = der(certificate, 0x30)?;
    let (algorithm, _) = der(rest, 0x30)?;
    let (oid, _) = der(algorithm, 0x06)?;
    const RSA: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01];
    const ECDSA: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04];
    use ring::digest::{SHA256, SHA384, SHA512};
    match (oid.strip_prefix(RSA), oid.strip_prefix(ECDSA)) {
        // md5, sha1, sha256, sha384, sha512 WithRSAEncryption
        (Some([0x04 | 0x05 | 0x0b]), _) => Some(&SHA256),
        (Some([0x0c]), _) => Some(&SHA384),
        (Some([0x0d]), _) => Some(&SHA512),
        // ecdsa-with-SHA1, ecdsa-with-SHA256, -SHA384, -SHA512
        (_, Some([0x01] | [0x03, 0x02])) => Some(&SHA256),
        (_, Some([0x03, 0x03])) => Some(&SHA384),
        (_, Some([0x03, 0x04])) => Some(&SHA512),
        _ => None,
    }
}

/// The contents of the DER element at the start of `input`, which must have tag `tag`, and what
/// follows it.
fn der(input: &[u8], tag: u8) -> Option<(&[u8], &[u8])> {
    let (&first, rest) = input.split_first()?;
    if first != tag {
        return None;
    }
    let (&len, mut rest) = rest.split_first()?;
    let len = if len < 0x80 {
        usize::from(len)
    } else {
        let count = usize::from(len & 0x7f);
        if count == 0 || count > 4 || rest.len() < count {
            return None;
        }
        let (bytes, after) = rest.split_at(count);
        rest = after;
        bytes.iter().fold(0usize, |n, &b| (n << 8) | usize::from(b))
    };
    (rest.len() >= len).then(|| rest.split_at(len))
}

/// A connection string without its `sslmode` and `sslrootcert`, and their values (the last of
/// each), as libpq reads both forms: a `postgres://` URL's query parameters (percent-encoded), or
/// `key=value` pairs (a value in single quotes, `\` escaping the next character).
pub(crate) fn split(url: &str) -> Result<(String, Option<String>, Option<String>)> {
    let mut mode = None;
    let mut root_cert = None;
    let mut take = |key: &str, value: String| match key {
        "sslmode" => {
            mode = Some(value);
            true
        }
        "sslrootcert" => {
            root_cert = Some(value);
            true
        }
        _ => false,
    };
    let rest = if ["postgres://", "postgresql://"].iter().any(|p| url.starts_with(p)) {
        let Some((base, query)) = url.split_once('?') else { return Ok((url.to_owned(), None, None)) };
        let mut kept = Vec::new();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            if !take(&percent_decode(key)?, percent_decode(value)?) {
                kept.push(pair);
            }
        }
        if kept.is_empty() { base.to_owned() } else { format!("{base}?{}", kept.join("&")) }
    } else {
        let mut out = String::new();
        let mut last = 0;
        for (start, end, key, value) in pairs(url)? {
            if take(key, value) {
                out.push_str(&url[last..start]);
                last = end;
            }
        }
        out.push_str(&url[last..]);
        out
    };
    Ok((rest, mode, root_cert))
}

/// `%XX` decoded, as UTF-8.
fn percent_decode(s: &str) -> Result<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes.get(i + 1..i + 3).and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).map_err(|_| Error::BadQuery(format!("{s:?} is not UTF-8 once percent-decoded")))
}

/// Each `key=value` of a libpq connection string: its byte span, key and value.
fn pairs(s: &str) -> Result<Vec<(usize, usize, &str, String)>> {
    let bad = |what: &str| Error::BadQuery(format!("not a PostgreSQL URL or connection string: {what}"));
    let mut out = Vec::new();
    let mut it = s.char_indices().peekable();
    let skip_ws = |it: &mut std::iter::Peekable<std::str::CharIndices<'_>>| {
        while it.next_if(|(_, c)| c.is_whitespace()).is_some() {}
    };
    loop {
        skip_ws(&mut it);
        let Some(&(start, _)) = it.peek() else { break };
        while it.next_if(|&(_, c)| !c.is_whitespace() && c != '=').is_some() {}
        let key_end = it.peek().map_or(s.len(), |&(i, _)| i);
        skip_ws(&mut it);
        if it.next().map(|(_, c)| c) != Some('=') {
            return Err(bad(&format!("{:?} has no value", &s[start..key_end])));
        }
        skip_ws(&mut it);
        let quoted = it.next_if(|&(_, c)| c == '\'').is_some();
        let mut value = String::new();
        loop {
            match it.peek().map(|&(_, c)| c) {
                None if quoted => return Err(bad("an unterminated quoted value")),
                None => break,
                Some('\'') if quoted => {
                    it.next();
                    break;
                }
                Some(c) if c.is_whitespace() && !quoted => break,
                Some('\\') => {
                    it.next();
                    if let Some((_, c)) = it.next() {
                        value.push(c);
                    }
                }
                Some(c) => {
                    it.next();
                    value.push(c);
                }
            }
        }
        let end = it.peek().map_or(s.len(), |&(i, _)| i);
        out.push((start, end, &s[start..key_end], value));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| (*v).to_owned())
    }

    #[test]
    fn sslmode_and_sslrootcert_are_taken_out_of_either_form() -> Result<()> {
        let (rest, mode, root) =
            split("postgres://u@h:5/db?application_name=x&sslmode=verify-full&sslrootcert=%2Fetc%2Fca%20dir%2Fca.pem")?;
        assert_eq!(rest, "postgres://u@h:5/db?application_name=x");
        assert_eq!(mode.as_deref(), Some("verify-full"));
        assert_eq!(root.as_deref(), Some("/etc/ca dir/ca.pem"));
        let (rest, mode, root) = split("postgresql://h/db?sslmode=require")?;
        assert_eq!((rest.as_str(), mode.as_deref(), root), ("postgresql://h/db", Some("require"), None));
        let (rest, mode, root) = split("postgres://h/db")?;
        assert_eq!((rest.as_str(), mode, root), ("postgres://h/db", None, None));
        let (rest, mode, root) =
            split(r"host=h sslmode = verify-ca  sslrootcert='/a b/it\'s.pem' dbname=d sslrootcert=/c\ d.pem")?;
        assert_eq!(rest.split_whitespace().collect::<Vec<_>>(), ["host=h", "dbname=d"]);
        assert_eq!(mode.as_deref(), Some("verify-ca"));
        assert_eq!(root.as_deref(), Some("/c d.pem"), "the last one counts");
        assert!(split("host=h sslrootcert='/open").is_err());
        assert!(split("host").is_err());
        assert_eq!(split("")?, (String::new(), None, None));
        Ok(())
    }

    #[test]
    fn the_mode_comes_from_the_string_then_the_environment_and_verifying_needs_a_root_certificate() -> Result<()> {
        let vars = [("PGSSLMODE", "require"), ("PGSSLROOTCERT", "/ca.pem")];
        let tls = Tls::new(None, None, &env(&vars))?;
        assert_eq!((tls.mode, tls.root_cert.as_deref()), (SslMode::Require, Some(Path::new("/ca.pem"))));
        let tls = Tls::new(Some("disable".into()), None, &env(&vars))?;
        assert_eq!(tls.mode, SslMode::Disable);
        assert_eq!(Tls::new(None, None, &env(&[]))?.mode, SslMode::Prefer);
        let e = Tls::new(Some("verify-everything".into()), None, &env(&[])).unwrap_err().to_string();
        assert!(e.contains("verify-everything") && e.contains("verify-full"), "{e}");
        let e = Tls::new(None, None, &env(&[("PGSSLMODE", "strict")])).unwrap_err().to_string();
        assert!(e.starts_with("PGSSLMODE: sslmode \"strict\""), "{e}");
        // The file may come from the environment when the mode comes from the URL: checked at connect.
        let alone = Tls::new(Some("verify-full".into()), None, &env(&[]))?;
        let e = alone.connector().err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("needs sslrootcert"), "{e}");
        let with = Tls::new(Some("verify-full".into()), None, &env(&vars))?;
        assert_eq!(with.root_cert.as_deref(), Some(Path::new("/ca.pem")));
        let system = Tls::new(Some("verify-ca".into()), Some("system".into()), &env(&[]))?;
        assert!(system.connector().is_err());
        Ok(())
    }

    #[test]
    fn a_root_certificate_file_that_is_missing_or_not_pem_is_named_in_the_error() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.pem");
        let e = read_roots(&missing).unwrap_err().to_string();
        assert!(e.contains("missing.pem") && e.contains("cannot be read"), "{e}");
        let text = dir.path().join("text.pem");
        std::fs::write(&text, "not a certificate\n").unwrap();
        let e = read_roots(&text).unwrap_err().to_string();
        assert!(e.contains("text.pem") && e.contains("no PEM certificate"), "{e}");
        let broken = dir.path().join("broken.pem");
        std::fs::write(&broken, "-----BEGIN CERTIFICATE-----\nnot base64!\n-----END CERTIFICATE-----\n").unwrap();
        let e = read_roots(&broken).unwrap_err().to_string();
        assert!(e.contains("broken.pem"), "{e}");
    }

    #[test]
    fn the_signature_hash_is_read_from_the_certificate_s_algorithm() {
        // SEQUENCE { SEQUENCE {} (the tbsCertificate), SEQUENCE { OID ecdsa-with-SHA384 } }
        let cert = [0x30, 0x0e, 0x30, 0x00, 0x30, 0x0a, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x03];
        assert_eq!(signature_hash(&cert).map(|a| a.output_len()), Some(48));
        let mut sha1_rsa = vec![0x30, 0x0f, 0x30, 0x00, 0x30, 0x0b, 0x06, 0x09];
        sha1_rsa.extend([0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x05]);
        assert_eq!(signature_hash(&sha1_rsa).map(|a| a.output_len()), Some(32), "SHA-1 is replaced by SHA-256");
        // Ed25519 (1.3.101.112): no binding.
        let ed = [0x30, 0x09, 0x30, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70];
        assert!(signature_hash(&ed).is_none());
        assert!(signature_hash(&cert[..10]).is_none(), "a cut certificate");
    }
}
