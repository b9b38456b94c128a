//! Git repositories on disk for the ConfigRepo suite and benchmark: bare repositories a
//! ConfigRepo fetches over `file://`, and working copies whose commits go to them.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A working copy whose commits go to a repository (a directory, or Gitea over HTTP).
pub struct Work {
    dir: PathBuf,
    remote: String,
}

impl Work {
    /// An empty working copy in `dir` (emptied first) on branch `main`, pushing to `remote`.
    pub fn new(dir: PathBuf, remote: &str) -> Work {
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let work = Work {
            dir,
            remote: remote.to_owned(),
        };
        work.git(&["init", "-q", "-b", "main"]);
        work
    }

    /// The working tree: what the last commit holds is on disk there.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Runs git in the working copy; its output, trimmed.
    pub fn git(&self, args: &[&str]) -> String {
        let out = Command::new("git")
            .args([
                "-c",
                "user.name=household",
                "-c",
                "user.email=h@example.org",
            ])
            .args(args)
            .current_dir(&self.dir)
            .output()
            .expect("running git");
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    /// Makes the tree exactly `files`, commits on `main` (amending the last commit with `amend`:
    /// a rewritten history) and pushes with `--force`; returns the commit.
    pub fn commit(&self, files: &[(&str, &str)], amend: bool) -> String {
        for entry in std::fs::read_dir(&self.dir).unwrap() {
            let path = entry.unwrap().path();
            if path.file_name().unwrap() != ".git" {
                let _ = std::fs::remove_dir_all(&path).or_else(|_| std::fs::remove_file(&path));
            }
        }
        for (path, text) in files {
            let full = self.dir.join(path);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(full, text).unwrap();
        }
        self.git(&["add", "-A"]);
        let mut args = vec!["commit", "-q", "--allow-empty", "-m", "change"];
        if amend {
            args.push("--amend");
        }
        self.git(&args);
        self.git(&["push", "-q", "--force", &self.remote, "main"]);
        self.git(&["rev-parse", "HEAD"])
    }
}

/// A bare repository `name` under `root`, as a household keeps its config on a file server: its
/// directory and its `file://` URL.
pub fn bare(root: &Path, name: &str) -> (PathBuf, String) {
    let dir = root.join(name);
    let _ = std::fs::remove_dir_all(&dir);
    let out = Command::new("git")
        .args(["init", "-q", "--bare", "-b", "main"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(out.status.success());
    let url = format!("file://{}", dir.display());
    (dir, url)
}
