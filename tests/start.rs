//! How `serve` starts, as a person sees it: no warning about a directory scrollback itself made,
//! a short account of what it found and indexed with the address last and alone, and a second
//! `serve` on the same data directory told where the first one is.

use std::os::unix::fs::PermissionsExt;
use std::process::Command;

use crate::util::fixtures::codex;
use crate::util::server::Server;
use crate::util::{Env, fake_png, user_line};

const OPEN: &str = "the data directory was open to other users";

/// `scrollback` run under `sh` with umask 022 (as most people's shells have it), HOME the test's
/// directory, no transcript root or data directory given: the defaults, in a fresh home.
fn fresh_home(env: &Env) -> Command {
    let mut cmd = Command::new("sh");
    cmd.args(["-c", "umask 022; exec \"$0\" \"$@\"", env!("CARGO_BIN_EXE_scrollback")]);
    for (key, value) in env.cmd().get_envs() {
        match value {
            Some(value) => cmd.env(key, value),
            None => cmd.env_remove(key),
        };
    }
    cmd.env_remove("SCROLLBACK_TRANSCRIPTS").env_remove("SCROLLBACK_DATA_DIR");
    cmd
}

#[test]
fn in_a_fresh_home_with_umask_022_serve_demo_then_serve_warn_of_nothing_and_a_directory_made_open_warns_once() {
    let env = Env::new();
    let data = env.dir.path().join(".local/share/scrollback");
    let server = Server::start_cmd(fresh_home(&env), &["--demo"]);
    server.wait_for_sessions(2);
    drop(server);
    let server = Server::start_cmd(fresh_home(&env), &[]);
    let said = format!("{}{}", server.start, server.log.lock().unwrap());
    drop(server);
    assert!(!said.contains(OPEN), "{said}");
    for dir in [data.clone(), data.join("demo"), data.join("demo/projects")] {
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700, "{} is its owner's alone from the start", dir.display());
    }
    // Someone opened it: said once, and made private again.
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o755)).unwrap();
    let server = Server::start_cmd(fresh_home(&env), &[]);
    assert_eq!(server.start.matches(OPEN).count(), 1, "{}", server.start);
    drop(server);
    assert_eq!(std::fs::metadata(&data).unwrap().permissions().mode() & 0o777, 0o700);
}

#[test]
fn serve_says_which_agents_it_found_and_how_many_sessions_it_indexed_and_last_its_address_alone() {
    let env = Env::new();
    let home = env.dir.path();
    for (n, session) in ["c1", "c2"].iter().enumerate() {
        let path = home.join(format!(".claude/projects/p/{session}.jsonl"));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, user_line(session, &format!("u{n}"), "\"hello\"", "") + "\n").unwrap();
    }
    let thread = "01a0c0de-0000-7000-8000-0000000000f2";
    let rollout = home.join(format!(".{}", codex::rollout(thread)));
    std::fs::create_dir_all(rollout.parent().unwrap()).unwrap();
    let photos = [fake_png(1, 100), fake_png(2, 100), fake_png(3, 100), fake_png(4, 100)];
    std::fs::write(&rollout, codex::with_photos(thread, &photos)).unwrap();
    let mut cmd = env.cmd();
    cmd.env_remove("SCROLLBACK_TRANSCRIPTS");
    let server = Server::start_cmd(cmd, &[]);
    let lines: Vec<&str> = server.start.lines().collect();
    assert_eq!(lines.last(), Some(&format!("{}/", server.base).as_str()), "the address, alone, last: {lines:?}");
    assert_eq!(lines.len(), 4, "{lines:?}");
    let version = env!("CARGO_PKG_VERSION");
    assert_eq!(lines[0], format!("scrollback {version}: Claude Code (2 sessions), Codex (1 session)"));
    assert!(lines[1].starts_with("no transcripts yet for Gemini CLI, "), "{lines:?}");
    assert!(!lines[1].contains("Claude Code") && !lines[1].contains("Codex"), "{lines:?}");
    assert!(lines[2].starts_with("3 sessions indexed, caught up in "), "{lines:?}");
    assert!(lines.iter().all(|l| l.chars().count() <= 200), "{lines:?}");
}

#[test]
fn a_second_serve_says_where_the_first_serves_and_a_crashed_servers_record_is_not_believed() {
    let env = Env::new();
    env.write("p/s.jsonl", user_line("s", "u1", "\"hello\"", "") + "\n");
    let mut first = Server::start(&env, &[]);
    let second = env.cmd().args(["serve", "--listen", "127.0.0.1:0"]).output().unwrap();
    assert_eq!(second.status.code(), Some(1));
    let said = String::from_utf8_lossy(&second.stderr);
    let pid = first.child.id();
    assert!(
        said.contains(&format!(
            "scrollback is already serving this data directory ({}) at {}/ (serve, pid {pid})",
            env.data.display(),
            first.base
        )),
        "{said}"
    );
    // A server killed outright leaves its record, but not its lock: the next one serves, and says its own address.
    first.child.kill().unwrap();
    first.child.wait().unwrap();
    let lock = std::fs::read_to_string(env.data.join("scrollback.lock")).unwrap();
    assert!(lock.contains(&first.base), "{lock}");
    drop(first);
    let third = Server::start(&env, &[]);
    third.wait_for_sessions(1);
    let lock = std::fs::read_to_string(env.data.join("scrollback.lock")).unwrap();
    assert_eq!(lock, format!("serve {}\n{}/\n", third.child.id(), third.base));
    // Another command is told who holds it.
    let index = env.cmd().arg("index").output().unwrap();
    let said = String::from_utf8_lossy(&index.stderr);
    assert!(
        said.contains(&format!("already serving this data directory ({}) at {}/", env.data.display(), third.base)),
        "{said}"
    );
}
