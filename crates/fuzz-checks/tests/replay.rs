//! Replays every committed input of every fuzz target — the seed corpora
//! (`fuzz/corpus/<target>/`) and the inputs of past findings
//! (`fuzz/regressions/<target>/`) — through the same checks the fuzz targets
//! run, under plain `cargo test`, on stable, without libFuzzer. A finding,
//! once its input is committed, stays a unit test.

use std::fs;
use std::path::{Path, PathBuf};

use fuzz_checks::{TARGETS, replay};

/// The files directly in `dir` (none if it does not exist), sorted so that
/// runs are reproducible.
fn inputs(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else { return Vec::new() };
    let mut files: Vec<PathBuf> = entries
        .map(|entry| entry.expect("reading a corpus directory").path())
        .filter(|path| path.is_file() && path.file_name().is_some_and(|name| !name.to_string_lossy().starts_with('.')))
        .filter(|path| path.extension().is_none_or(|ext| ext != "md"))
        .collect();
    files.sort();
    files
}

/// The fuzz project's directory, `fuzz/` at the repository's root, where
/// cargo-fuzz keeps each target's corpus.
fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

fn replay_dir(kind: &str, target: &str) -> usize {
    let dir = fuzz_dir().join(kind).join(target);
    let files = inputs(&dir);
    for file in &files {
        let data = fs::read(file).expect("reading an input");
        eprintln!("replaying {}", file.display());
        replay(target, &data);
    }
    files.len()
}

#[test]
fn seed_corpora() {
    for target in TARGETS {
        let replayed = replay_dir("corpus", target);
        assert!(replayed > 0, "no seed inputs for {target} in fuzz/corpus/{target}/");
    }
}

#[test]
fn regressions() {
    for target in TARGETS {
        replay_dir("regressions", target);
    }
}

#[test]
#[should_panic(expected = "unknown fuzz target")]
fn unknown_target_is_refused() {
    replay("no_such_target", b"");
}
