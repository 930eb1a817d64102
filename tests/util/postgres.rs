//! A real PostgreSQL cluster for a test: Debian's `postgresql` package, `initdb` and `pg_ctl` in a
//! temporary directory, on a free loopback port, run as the `postgres` user when the tests run as
//! root (`initdb` refuses root). Stopped and removed when dropped. Where the package is missing the
//! test says so and skips; in CI (`.ci/run` installs it) that fails.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub struct Cluster {
    _dir: tempfile::TempDir,
    data: PathBuf,
    bin: PathBuf,
    pub port: u16,
    as_postgres: bool,
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
        let cluster = Cluster { data, bin, port: free_port(), as_postgres, _dir: dir };
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

    fn socket_dir(&self) -> &Path {
        self.data.parent().unwrap()
    }

    /// Starts the server (again).
    pub fn start_server(&self) {
        let log = self.socket_dir().join("server.log");
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=50",
            self.port,
            self.socket_dir().display()
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
        let mut c = self.client("postgres");
        c.batch_execute(&format!("CREATE DATABASE {name}")).unwrap();
    }

    /// The URL of database `db`, for `--postgres` and `--push`.
    pub fn url(&self, db: &str) -> String {
        format!("postgres://hub@127.0.0.1:{}/{db}", self.port)
    }

    pub fn client(&self, db: &str) -> postgres::Client {
        postgres::Client::connect(&self.url(db), postgres::NoTls).unwrap()
    }
}
