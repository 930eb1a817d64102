//! A real PostgreSQL cluster for a test: Debian's `postgresql` package, `initdb` and `pg_ctl` in a
//! temporary directory, on a free loopback port, run as the `postgres` user when the tests run as
//! root (`initdb` refuses root). Stopped and removed when dropped. Where the package is missing the
//! test says so and skips; in CI (`.ci/run` installs it) that fails.
//!
//! [`Cluster::start_tls`] starts one that takes TCP connections over TLS only, its certificate
//! signed by a CA made for the test with the `openssl` tool ([`Certs`]).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub struct Cluster {
    _dir: tempfile::TempDir,
    data: PathBuf,
    bin: PathBuf,
    pub port: u16,
    as_postgres: bool,
    /// More `-c` settings for the server, kept across restarts.
    settings: String,
}

/// A test's certificates, PEM, in a directory of the cluster's.
pub struct Certs {
    /// The CA that signed the hub's certificate.
    pub ca: PathBuf,
    /// Another CA, which signed nothing the hub sends.
    pub other_ca: PathBuf,
}

/// The names the hub's certificate is for (its subject alternative names).
pub const TLS_NAMES: &str = "DNS:hub.test,IP:127.0.0.1";

/// Runs `openssl` with `args` in `dir`, which must succeed.
fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the openssl tool is installed (.ci/run installs the openssl package)");
    assert!(out.status.success(), "openssl {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr));
}

/// A self-signed CA `name`.pem (P-256) and its key `name`.key in `dir`.
fn make_ca(dir: &Path, name: &str) {
    let (key, pem, subject) = (format!("{name}.key"), format!("{name}.pem"), format!("/CN=scrollback test {name}"));
    #[rustfmt::skip]
    openssl(dir, &["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-keyout", &key, "-out", &pem, "-days", "2", "-subj", &subject,
        "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"]);
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = self.ctl(&["stop", "-m", "immediate", "-w"]);
    }
}

/// The directory holding `initdb` and `pg_ctl`: the newest `/usr/lib/postgresql/*/bin`.
fn bin_dir() -> Option<PathBuf> {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| {
            let e = e.ok()?;
            let v: u32 = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").exists().then_some((v, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin)
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

impl Cluster {
    /// A new cluster with a database `team` (and the superuser `hub`, trusted on loopback), or
    /// `None` after saying why the test skips.
    pub fn start() -> Option<Cluster> {
        Self::start_with(|_| String::new())
    }

    /// A new cluster as [`Self::start`]'s that takes TCP connections over TLS only (`hostssl`, no
    /// `host` line; the test's own client comes over the Unix socket: [`Self::local_client`]),
    /// with a certificate for [`TLS_NAMES`] signed by [`Certs::ca`]; or `None` as `start`.
    pub fn start_tls() -> Option<(Cluster, Certs)> {
        let mut certs = None;
        let cluster = Self::start_with(|dir| {
            let tls = dir.join("tls");
            std::fs::create_dir(&tls).unwrap();
            make_ca(&tls, "ca");
            make_ca(&tls, "other-ca");
            std::fs::write(
                tls.join("server.ext"),
                format!(
                    "subjectAltName={TLS_NAMES}\nbasicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\n\
                     extendedKeyUsage=serverAuth\n"
                ),
            )
            .unwrap();
            #[rustfmt::skip]
            openssl(&tls, &["req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=hub.test"]);
            #[rustfmt::skip]
            openssl(&tls, &["x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
                "-set_serial", "2", "-days", "2", "-extfile", "server.ext", "-out", "server.pem"]);
            // TCP over TLS only; the socket for the test's own client.
            std::fs::write(
                tls.join("pg_hba.conf"),
                "local all all trust\nhostssl all pusher 127.0.0.1/32 scram-sha-256\nhostssl all all 127.0.0.1/32 trust\n",
            )
            .unwrap();
            // The server refuses a key others can read, and must own it.
            std::fs::set_permissions(tls.join("server.key"), std::os::unix::fs::PermissionsExt::from_mode(0o600))
                .unwrap();
            if rustix::process::geteuid().is_root() {
                for file in ["server.key", "server.pem", "pg_hba.conf"] {
                    let chown = Command::new("chown").arg("postgres:postgres").arg(tls.join(file)).status().unwrap();
                    assert!(chown.success());
                }
            }
            certs = Some(Certs { ca: tls.join("ca.pem"), other_ca: tls.join("other-ca.pem") });
            format!(
                " -c ssl=on -c ssl_cert_file={0}/server.pem -c ssl_key_file={0}/server.key -c hba_file={0}/pg_hba.conf",
                tls.display()
            )
        })?;
        Some((cluster, certs.unwrap()))
    }

    /// A new cluster, the server started with the settings `settings` makes in the cluster's
    /// directory.
    fn start_with(settings: impl FnOnce(&Path) -> String) -> Option<Cluster> {
        let Some(bin) = bin_dir() else {
            assert!(std::env::var_os("CI").is_none(), "PostgreSQL is missing: .ci/run installs the postgresql package");
            eprintln!("skipped: no PostgreSQL under /usr/lib/postgresql (apt install postgresql)");
            return None;
        };
        let as_postgres = rustix::process::geteuid().is_root();
        let dir = tempfile::Builder::new().prefix("scrollback-pg").tempdir_in("/tmp").unwrap();
        if as_postgres {
            let chown = Command::new("chown").args(["postgres:postgres"]).arg(dir.path()).status().unwrap();
            assert!(chown.success());
        }
        let data = dir.path().join("data");
        let settings = settings(dir.path());
        let cluster = Cluster { data, bin, port: free_port(), as_postgres, settings, _dir: dir };
        let out = cluster.run(
            "initdb",
            &["-D", cluster.data.to_str().unwrap(), "-U", "hub", "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8"],
        );
        assert!(out.status.success(), "initdb: {}", String::from_utf8_lossy(&out.stderr));
        cluster.start_server();
        cluster.create_database("team");
        Some(cluster)
    }

    fn run(&self, program: &str, args: &[&str]) -> Output {
        let path = self.bin.join(program);
        let mut cmd = if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(&path);
            c
        } else {
            Command::new(&path)
        };
        cmd.args(args).current_dir("/tmp").output().unwrap()
    }

    fn ctl(&self, args: &[&str]) -> Output {
        let mut all = vec!["-D", self.data.to_str().unwrap()];
        all.extend_from_slice(args);
        self.run("pg_ctl", &all)
    }

    /// The directory of the server's Unix socket.
    pub fn socket_dir(&self) -> &Path {
        self.data.parent().unwrap()
    }

    /// Starts the server (again).
    pub fn start_server(&self) {
        let log = self.socket_dir().join("server.log");
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=50{}",
            self.port,
            self.socket_dir().display(),
            self.settings
        );
        let out = self.ctl(&["-l", log.to_str().unwrap(), "-o", &options, "-w", "-t", "60", "start"]);
        assert!(
            out.status.success(),
            "pg_ctl start: {}{}",
            String::from_utf8_lossy(&out.stderr),
            std::fs::read_to_string(&log).unwrap_or_default()
        );
    }

    /// Stops the server (fast: open connections are cut).
    pub fn stop_server(&self) {
        let out = self.ctl(&["stop", "-m", "fast", "-w"]);
        assert!(out.status.success(), "pg_ctl stop: {}", String::from_utf8_lossy(&out.stderr));
    }

    pub fn create_database(&self, name: &str) {
        let mut c = self.local_client("postgres");
        c.batch_execute(&format!("CREATE DATABASE {name}")).unwrap();
    }

    /// The URL of database `db`, for `--postgres` and `--push`.
    pub fn url(&self, db: &str) -> String {
        format!("postgres://hub@127.0.0.1:{}/{db}", self.port)
    }

    pub fn client(&self, db: &str) -> postgres::Client {
        postgres::Client::connect(&self.url(db), postgres::NoTls).unwrap()
    }

    /// A client of database `db` over the Unix socket (which has no TLS, and needs none).
    pub fn local_client(&self, db: &str) -> postgres::Client {
        postgres::Config::new()
            .host_path(self.socket_dir())
            .port(self.port)
            .user("hub")
            .dbname(db)
            .connect(postgres::NoTls)
            .unwrap()
    }
}
