//! The git2 adapter against real repositories on disk, fetched over `file://`.

use std::path::{Path, PathBuf};

use git2::{Repository, Signature};

use super::*;

/// A fresh directory under the system's temporary directory.
pub(super) fn scratch(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("ledgerops-git-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Commits exactly `files` (path, text) on `branch` of the repository at `dir`, replacing the
/// branch's tree; returns the commit.
pub(super) fn commit(dir: &Path, branch: &str, files: &[(&str, &str)], parent: bool) -> String {
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

/// Commits `tree` as the only commit of `main`; returns the commit.
fn commit_tree(repo: &Repository, tree: git2::Oid) -> String {
    let tree = repo.find_tree(tree).unwrap();
    let me = Signature::now("test", "test@example.org").unwrap();
    let id = repo.commit(None, &me, &me, "tree", &tree, &[]).unwrap();
    repo.reference("refs/heads/main", id, true, "test").unwrap();
    id.to_string()
}

/// `n` characters that compress poorly, so that a pack carries them at about their size.
fn noise(n: usize, seed: u64) -> String {
    let mut x = seed;
    (0..n)
        .map(|_| {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            char::from(b'!' + (x >> 58) as u8)
        })
        .collect()
}

pub(super) fn url(dir: &Path) -> String {
    format!("file://{}", dir.display())
}

/// Branch `main`, the whole tree, no credentials, any host, nothing applied before.
pub(super) fn request<'a>(cache: &'a Path, url: &'a str, limits: &'a Limits) -> FetchRequest<'a> {
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
    assert_eq!(
        fetch(&request(&cache, &url, &limits)).unwrap().commit,
        second
    );
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
    commit_tree(&repo, builder.write().unwrap());
    let (cache, url, limits) = (base.join("cache"), url(&origin), Limits::default());
    let e = fetch(&request(&cache, &url, &limits)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "bad.yaml is not UTF-8 text: resources must be UTF-8 YAML"
    );
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

#[test]
fn a_huge_blob_is_refused_by_the_size_in_its_header_before_it_is_inflated() {
    let base = scratch("huge");
    let origin = base.join("origin");
    // 50 MB of zeros: a few dozen kilobytes in the pack, so only the header tells its size.
    let zeros = "\0".repeat(50 << 20);
    let head = commit(
        &origin,
        "main",
        &[("a.yaml", "a: 1\n"), ("huge.yaml", &zeros)],
        false,
    );
    let (cache, url, limits) = (base.join("cache"), url(&origin), Limits::default());
    let e = fetch(&request(&cache, &url, &limits)).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "huge.yaml of revision main@sha1:{head} is 52428800 bytes (at most 1048576 bytes a file or directory listing): split the repository, or point spec.path at a smaller directory"
        )
    );
    assert_eq!(e.reason(), "InvalidRepository");
    let stored = cache::disk_usage(&cache);
    assert!(stored < 1 << 20, "{stored} bytes in the cache");
    let _ = std::fs::remove_dir_all(&base);
}

/// Files committed: path and text.
type Files<'a> = Vec<(&'a str, &'a str)>;

/// Each limit on what is read of a revision, small: the files committed, the path read, and the
/// message, around the revision, that names what passed it.
#[test]
fn every_limit_on_what_is_read_names_what_passed_it() {
    let limits = Limits {
        file_bytes: 200,
        total_bytes: 150,
        tree_entries: 5,
        ..Limits::default()
    };
    let sixty = format!("v: {}\n", "x".repeat(56));
    let big = format!("v: {}\n", "x".repeat(197));
    let names: Vec<String> = (0..8)
        .map(|i| format!("many/an-entry-with-a-long-name-{i}.txt"))
        .collect();
    let listing: Files = names.iter().map(|n| (n.as_str(), "")).collect();
    let six: Files = ["f0", "f1", "f2", "f3", "f4", "f5"]
        .iter()
        .map(|n| (*n, ""))
        .collect();
    let object = " is 472 bytes (at most 200 bytes a file or directory listing)";
    let cases: Vec<(Files, &str, (&str, &str))> = vec![
        (
            vec![("big.yaml", &big)],
            ".",
            (
                "big.yaml",
                " is 201 bytes (at most 200 bytes a file or directory listing)",
            ),
        ),
        (
            vec![("a.yaml", &sixty), ("b.yaml", &sixty), ("c.yaml", &sixty)],
            ".",
            (
                "the YAML files under .",
                " pass 150 bytes at c.yaml (at most 150 bytes in all)",
            ),
        ),
        (
            six,
            ".",
            (
                ".",
                " holds more than 5 files and directories, passed at f5 (at most 5 entries)",
            ),
        ),
        (listing.clone(), ".", ("many", object)),
        (listing, "many", ("directory many", object)),
    ];
    for (i, (files, path, (what, limit))) in cases.into_iter().enumerate() {
        let base = scratch(&format!("limit-{i}"));
        let origin = base.join("origin");
        let head = commit(&origin, "main", &files, false);
        let (cache, url) = (base.join("cache"), url(&origin));
        let e = fetch(&FetchRequest {
            path,
            ..request(&cache, &url, &limits)
        })
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "{what} of revision main@sha1:{head}{limit}: split the repository, or point spec.path at a smaller directory"
            )
        );
        assert_eq!(e.reason(), "InvalidRepository");
        let _ = std::fs::remove_dir_all(&base);
    }
}

#[test]
fn a_tree_of_thirty_thousand_entries_is_refused_while_it_is_walked() {
    let base = scratch("wide");
    let origin = base.join("origin");
    let repo = Repository::init(&origin).unwrap();
    // Three directories of 10,000 empty files each, none of them YAML: every entry counts.
    let empty = repo.blob(b"").unwrap();
    let mut root = repo.treebuilder(None).unwrap();
    for d in 0..3 {
        let mut dir = repo.treebuilder(None).unwrap();
        for f in 0..10_000 {
            dir.insert(format!("f{f}"), empty, 0o100644).unwrap();
        }
        root.insert(format!("d{d}"), dir.write().unwrap(), 0o040000)
            .unwrap();
    }
    let head = commit_tree(&repo, root.write().unwrap());
    let (cache, url, limits) = (base.join("cache"), url(&origin), Limits::default());
    let e = fetch(&request(&cache, &url, &limits)).unwrap_err();
    let message = e.to_string();
    assert!(
        message.starts_with(&format!(
            ". of revision main@sha1:{head} holds more than 20000 files and directories, passed at d1/"
        )),
        "{message}"
    );
    assert!(message.ends_with("(at most 20000 entries): split the repository, or point spec.path at a smaller directory"), "{message}");
    let _ = std::fs::remove_dir_all(&base);
}

#[test]
fn a_download_over_the_limit_is_stopped_as_it_arrives() {
    let base = scratch("pack");
    let origin = base.join("origin");
    commit(&origin, "main", &[("a.yaml", &noise(200_000, 1))], false);
    let (cache, url) = (base.join("cache"), url(&origin));
    let limits = Limits {
        repo_bytes: 50_000,
        ..Limits::default()
    };
    let e = fetch(&request(&cache, &url, &limits)).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "fetching branch main of {url} downloads more than 50000 bytes (at most 50000 bytes a ConfigRepo, --config-repo-max-bytes): follow a repository with a smaller history, or ask the operator to raise --config-repo-max-bytes"
        )
    );
    assert_eq!(e.reason(), "InvalidRepository");
    let _ = std::fs::remove_dir_all(&base);
}

#[test]
fn the_cache_of_a_config_repo_is_kept_within_its_limit() {
    let base = scratch("cache-bound");
    let origin = base.join("origin");
    let (cache, url) = (base.join("cache"), url(&origin));
    let limits = Limits {
        repo_bytes: 100_000,
        ..Limits::default()
    };
    // Over the limit before the fetch: it is only a cache, so it is emptied.
    std::fs::create_dir_all(&cache).unwrap();
    std::fs::write(cache.join("leftover"), vec![0; 150_000]).unwrap();
    commit(&origin, "main", &[("a.yaml", &noise(60_000, 1))], false);
    fetch(&request(&cache, &url, &limits)).unwrap();
    assert!(!cache.join("leftover").exists());
    // A force-push of as much again: both histories together pass the limit, so the cache is
    // fetched anew with the new one alone.
    let second = commit(&origin, "main", &[("a.yaml", &noise(60_000, 2))], false);
    assert_eq!(
        fetch(&request(&cache, &url, &limits)).unwrap().commit,
        second
    );
    let used = cache::disk_usage(&cache);
    assert!(used <= limits.repo_bytes, "{used} bytes in the cache");
    // A download within the limit whose cache (pack, index, the repository's own files) is not:
    // refused, and no cache is left.
    let pack = std::fs::read_dir(cache.join("objects/pack"))
        .unwrap()
        .flatten()
        .find(|e| e.path().extension().is_some_and(|x| x == "pack"))
        .unwrap()
        .metadata()
        .unwrap()
        .len();
    let fresh = base.join("fresh");
    let tight = Limits {
        repo_bytes: pack,
        ..Limits::default()
    };
    let e = fetch(&request(&fresh, &url, &tight)).unwrap_err();
    assert!(
        e.to_string().starts_with(&format!(
            "branch main of {url} takes {} bytes on disk once fetched (at most {pack} bytes a ConfigRepo, --config-repo-max-bytes)",
            used
        )),
        "{e}"
    );
    assert!(!fresh.exists());
    let _ = std::fs::remove_dir_all(&base);
}

#[test]
fn fast_forward_tells_whether_the_commit_descends_from_the_one_applied() {
    let base = scratch("fast-forward");
    let origin = base.join("origin");
    let (cache, url, limits) = (base.join("cache"), url(&origin), Limits::default());
    let get = |previous: Option<&str>| {
        let fetched = fetch(&FetchRequest {
            previous,
            ..request(&cache, &url, &limits)
        })
        .unwrap();
        (fetched.commit, fetched.fast_forward)
    };
    let first = commit(&origin, "main", &[("a.yaml", "v: 1\n")], false);
    let second = commit(&origin, "main", &[("a.yaml", "v: 2\n")], true);
    assert_eq!(get(None), (second.clone(), true));
    assert_eq!(get(Some(&first)), (second.clone(), true));
    assert_eq!(get(Some(&second)), (second.clone(), true));
    // Force-pushed back to an older commit.
    let repo = Repository::open(&origin).unwrap();
    let older = git2::Oid::from_str(&first).unwrap();
    repo.reference("refs/heads/main", older, true, "rewind")
        .unwrap();
    assert_eq!(get(Some(&second)), (first.clone(), false));
    // Force-pushed to an unrelated commit.
    let unrelated = commit(&origin, "main", &[("a.yaml", "v: 3\n")], false);
    assert_eq!(get(Some(&second)), (unrelated.clone(), false));
    assert_eq!(get(Some(&first)), (unrelated.clone(), false));
    // A commit the fetched history does not hold is no ancestor.
    let elsewhere = commit(&base.join("other"), "main", &[("b.yaml", "b: 1\n")], false);
    assert_eq!(get(Some(&elsewhere)), (unrelated, false));
    let _ = std::fs::remove_dir_all(&base);
}
