//! The git2 adapter against real repositories on disk, fetched over `file://`.

use std::path::{Path, PathBuf};

use git2::{Repository, Signature};

use super::*;

/// A fresh directory under the system's temporary directory.
fn scratch(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("ledgerops-git-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Commits exactly `files` (path, text) on `branch` of the repository at `dir`, replacing the
/// branch's tree; returns the commit.
fn commit(dir: &Path, branch: &str, files: &[(&str, &str)], parent: bool) -> String {
    let repo = Repository::open(dir).unwrap_or_else(|_| Repository::init(dir).unwrap());
    let mut index = git2::Index::new().unwrap();
    for (path, text) in files {
        let id = repo.blob(text.as_bytes()).unwrap();
        let entry = git2::IndexEntry {
            ctime: git2::IndexTime::new(0, 0),
            mtime: git2::IndexTime::new(0, 0),
            dev: 0,
            ino: 0,
            mode: 0o100644,
            uid: 0,
            gid: 0,
            file_size: text.len() as u32,
            id,
            flags: 0,
            flags_extended: 0,
            path: path.as_bytes().to_vec(),
        };
        index.add(&entry).unwrap();
    }
    let tree = repo.find_tree(index.write_tree_to(&repo).unwrap()).unwrap();
    let me = Signature::now("test", "test@example.org").unwrap();
    let reference = format!("refs/heads/{branch}");
    let parents: Vec<git2::Commit> = match repo.find_reference(&reference) {
        Ok(r) if parent => vec![r.peel_to_commit().unwrap()],
        _ => Vec::new(),
    };
    let parents: Vec<&git2::Commit> = parents.iter().collect();
    let id = repo
        .commit(None, &me, &me, "change", &tree, &parents)
        .unwrap();
    repo.reference(&reference, id, true, "test").unwrap();
    id.to_string()
}

fn url(dir: &Path) -> String {
    format!("file://{}", dir.display())
}

/// Branch `main`, the whole tree, no credentials, any host, nothing applied before.
fn request<'a>(cache: &'a Path, url: &'a str, limits: &'a Limits) -> FetchRequest<'a> {
    FetchRequest {
        cache,
        url,
        branch: "main",
        path: ".",
        credentials: None,
        public_only: false,
        previous: None,
        limits,
    }
}

#[test]
fn reads_the_yaml_files_under_the_path_of_the_branch() {
    let base = scratch("path");
    let origin = base.join("origin");
    let head = commit(
        &origin,
        "main",
        &[
            ("household/b.yml", "b: 1\n"),
            ("household/nested/a.yaml", "a: 1\n"),
            ("household/README.md", "not yaml"),
            ("other/c.yaml", "c: 1\n"),
        ],
        false,
    );
    let (cache, url, limits) = (base.join("cache"), url(&origin), Limits::default());
    let fetched = fetch(&FetchRequest {
        path: "household",
        ..request(&cache, &url, &limits)
    })
    .unwrap();
    assert_eq!(fetched.commit, head);
    let paths: Vec<&str> = fetched.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["household/b.yml", "household/nested/a.yaml"]);
    let all = fetch(&request(&cache, &url, &limits)).unwrap();
    assert_eq!(all.files.len(), 3);
}

#[test]
fn follows_new_and_force_pushed_commits() {
    let base = scratch("force");
    let origin = base.join("origin");
    let cache = base.join("cache");
    commit(&origin, "main", &[("a.yaml", "v: 1\n")], false);
    let second = commit(&origin, "main", &[("a.yaml", "v: 2\n")], true);
    let (url, limits) = (url(&origin), Limits::default());
    assert_eq!(fetch(&request(&cache, &url, &limits)).unwrap().commit, second);
    // A history rewritten from scratch: no common ancestor with what the cache holds.
    let rewritten = commit(&origin, "main", &[("a.yaml", "v: 3\n")], false);
    let fetched = fetch(&request(&cache, &url, &limits)).unwrap();
    assert_eq!(fetched.commit, rewritten);
    assert_eq!(fetched.files[0].text, "v: 3\n");
}

#[test]
fn a_missing_branch_path_or_remote_is_named() {
    let base = scratch("missing");
    let origin = base.join("origin");
    let cache = base.join("cache");
    commit(&origin, "main", &[("a.yaml", "v: 1\n")], false);
    let cases = [
        (url(&origin), "gone", ".", "BranchNotFound"),
        (url(&origin), "main", "moved", "PathNotFound"),
        (url(&base.join("nothing")), "main", ".", "Unreachable"),
        (
            "http://127.0.0.1:9/h/c.git".to_owned(),
            "main",
            ".",
            "Unreachable",
        ),
    ];
    let limits = Limits::default();
    for (url, branch, path, reason) in cases {
        let e = fetch(&FetchRequest {
            branch,
            path,
            ..request(&cache, &url, &limits)
        })
        .unwrap_err();
        assert_eq!(e.reason(), reason, "{url} {branch} {path}: {e}");
    }
}

#[test]
fn a_file_that_is_not_text_is_refused_by_name() {
    let base = scratch("binary");
    let origin = base.join("origin");
    commit(&origin, "main", &[("bad.yaml", "\u{0}\u{ff}")], false);
    let repo = Repository::open(&origin).unwrap();
    // Replace the blob with bytes that are not UTF-8.
    let id = repo.blob(&[0xff, 0xfe, 0x00]).unwrap();
    let mut builder = repo.treebuilder(None).unwrap();
    builder.insert("bad.yaml", id, 0o100644).unwrap();
    let tree = repo.find_tree(builder.write().unwrap()).unwrap();
    let me = Signature::now("test", "test@example.org").unwrap();
    let c = repo.commit(None, &me, &me, "binary", &tree, &[]).unwrap();
    repo.reference("refs/heads/main", c, true, "test").unwrap();
    let (cache, url, limits) = (base.join("cache"), url(&origin), Limits::default());
    let e = fetch(&request(&cache, &url, &limits)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "bad.yaml is not UTF-8 text: resources must be UTF-8 YAML"
    );
}

#[test]
fn credentials_never_show_in_debug_output() {
    let c = Credentials {
        username: "household".into(),
        password: "s3cret-token".into(),
        serves: std::sync::Arc::new(|_| true),
    };
    assert!(!format!("{c:?}").contains("s3cret"));
}

#[test]
fn only_the_caches_of_deleted_config_repos_are_removed() {
    let root = scratch("forget");
    let kept = "6f1c2a3b-0d4e-4f5a-8b6c-7d8e9f0a1b2c";
    let gone = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";
    for dir in [
        kept,
        gone,
        "not-a-uid",
        "6f1c2a3b-0d4e-4f5a-8b6c-7d8e9f0a1b2g",
    ] {
        std::fs::create_dir_all(root.join(dir)).unwrap();
    }
    forget_caches(&root, &[kept.to_owned()]);
    let mut left: Vec<String> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(
        left,
        [
            "6f1c2a3b-0d4e-4f5a-8b6c-7d8e9f0a1b2c",
            "6f1c2a3b-0d4e-4f5a-8b6c-7d8e9f0a1b2g",
            "not-a-uid"
        ]
    );
    let _ = std::fs::remove_dir_all(&root);
}
