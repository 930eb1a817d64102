//! The directories scrollback follows, each of one transcript format: `--root FORMAT:DIR`, or every
//! format's default roots ([`scrollback_core::format::Format::default_roots`]) that exist.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use scrollback_core::format::{self, Format};

/// A directory of transcripts, and the format they are in.
#[derive(Debug, Clone)]
pub struct Root {
    /// The transcripts' format.
    pub format: &'static dyn Format,
    /// The directory (absolute once an indexer holds it).
    pub dir: PathBuf,
}

impl Root {
    /// A root of `format` at `dir`.
    pub fn new(format: &'static dyn Format, dir: impl Into<PathBuf>) -> Root {
        Root { format, dir: dir.into() }
    }

    /// Transcripts of the default format ([`format::DEFAULT`]) at `dir`: a root given without a
    /// format (`--transcripts DIR`).
    pub fn default_format(dir: impl Into<PathBuf>) -> Root {
        Root::new(format::DEFAULT, dir)
    }

    /// Parses `FORMAT:DIR` (`codex:/home/me/.codex/sessions`).
    pub fn parse(spec: &str) -> Result<Root, String> {
        let (name, dir) = spec
            .split_once(':')
            .ok_or_else(|| format!("{spec:?} is not FORMAT:DIR (formats: {})", format::names().join(", ")))?;
        let format = format::by_name(name)
            .ok_or_else(|| format!("no format {name:?} (formats: {})", format::names().join(", ")))?;
        if dir.is_empty() {
            return Err(format!("{spec:?} names no directory"));
        }
        Ok(Root::new(format, dir))
    }

    /// Every format's default roots, from the environment `var` reads, whether or not they exist.
    pub fn defaults(var: &dyn Fn(&str) -> Option<OsString>) -> Vec<Root> {
        format::FORMATS
            .iter()
            .flat_map(|f| f.default_roots(var).into_iter().map(move |dir| Root::new(*f, dir)))
            .collect()
    }

    /// The default roots from this process's environment.
    pub fn from_env() -> Vec<Root> {
        Root::defaults(&|name| std::env::var_os(name))
    }

    /// Whether the directory exists now.
    pub fn exists(&self) -> bool {
        self.dir.is_dir()
    }

    /// `FORMAT:DIR`, as `--root` takes it.
    pub fn spec(&self) -> String {
        format!("{}:{}", self.format.name(), self.dir.display())
    }
}

/// Of `roots`, the one `path` is in (the deepest, if roots nest).
pub fn root_of<'r>(roots: &'r [Root], path: &Path) -> Option<&'r Root> {
    roots.iter().filter(|r| path.starts_with(&r.dir)).max_by_key(|r| r.dir.components().count())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_and_name_their_format() {
        let root = Root::parse("codex:/x/sessions").unwrap();
        assert_eq!((root.format.name(), root.dir.as_path()), ("codex", Path::new("/x/sessions")));
        assert_eq!(root.spec(), "codex:/x/sessions");
        assert!(Root::parse("/x").unwrap_err().contains("FORMAT:DIR"));
        assert!(Root::parse("nonesuch:/x").unwrap_err().contains("claude, codex, gemini"));
        assert!(Root::parse("claude:").is_err());
    }

    #[test]
    fn the_defaults_follow_each_agents_variables() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |name: &str| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| OsString::from(v))
        };
        // The editors' extensions (Cline, Roo Code) have a root in each editor: their own tests say which.
        let specs = |roots: Vec<Root>| {
            roots.iter().filter(|r| !["cline", "roo"].contains(&r.format.name())).map(Root::spec).collect::<Vec<_>>()
        };
        assert_eq!(
            specs(Root::defaults(&env(&[("HOME", "/h")]))),
            [
                "claude:/h/.claude/projects",
                "codex:/h/.codex/sessions",
                "codex:/h/.codex/archived_sessions",
                "gemini:/h/.gemini/tmp",
                "qwen:/h/.qwen/projects",
                "qwen:/h/.qwen/tmp",
                "droid:/h/.factory/sessions",
                "cursor:/h/.cursor/projects",
                "pi:/h/.pi/agent/sessions",
                "copilot:/h/.copilot/session-state",
                "opencode:/h/.local/share/opencode",
                "kilo:/h/.local/share/kilo",
                "kiro:/h/.kiro/sessions/cli",
                "antigravity:/h/.gemini/antigravity-cli/brain",
            ]
        );
        assert_eq!(
            specs(Root::defaults(&env(&[
                ("HOME", "/h"),
                ("CLAUDE_CONFIG_DIR", "/c"),
                ("CODEX_HOME", "/x"),
                ("GEMINI_CLI_HOME", "/g"),
                ("QWEN_HOME", "/q"),
                ("QWEN_RUNTIME_DIR", "/r"),
                ("FACTORY_HOME_OVERRIDE", "/f"),
                ("PI_CODING_AGENT_DIR", "/p"),
                ("COPILOT_HOME", "/o"),
                ("XDG_DATA_HOME", "/d")
            ]))),
            [
                "claude:/c/projects",
                "codex:/x/sessions",
                "codex:/x/archived_sessions",
                "gemini:/g/.gemini/tmp",
                "qwen:/r/projects",
                "qwen:/q/tmp",
                "droid:/f/.factory/sessions",
                "cursor:/h/.cursor/projects",
                "pi:/p/sessions",
                "copilot:/o/session-state",
                "opencode:/d/opencode",
                "kilo:/d/kilo",
                "kiro:/h/.kiro/sessions/cli",
                "antigravity:/h/.gemini/antigravity-cli/brain",
            ]
        );
        assert!(Root::defaults(&env(&[])).is_empty());
    }

    #[test]
    fn a_path_belongs_to_its_deepest_root() {
        let roots = [Root::default_format("/t"), Root::parse("codex:/t/codex").unwrap()];
        assert_eq!(root_of(&roots, Path::new("/t/codex/a/rollout-x.jsonl")).unwrap().format.name(), "codex");
        assert_eq!(root_of(&roots, Path::new("/t/p/s.jsonl")).unwrap().format.name(), "claude");
        assert!(root_of(&roots, Path::new("/elsewhere/s.jsonl")).is_none());
    }
}
