//! Replays every saved input of every fuzz target through its check, on stable: the seeds, and
//! each input a fuzzer found that broke a promise (kept in `corpus/<target>/` as a regression
//! test, named `crash-…` by libFuzzer). A fuzz run adds what it learns to the same folders.

use std::path::Path;

#[test]
fn every_saved_input_keeps_every_promise() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    for (target, check) in lull_fuzz::TARGETS {
        let folder = corpus.join(target);
        let mut inputs: Vec<_> = std::fs::read_dir(&folder)
            .unwrap_or_else(|err| panic!("{}: {err}", folder.display()))
            .map(|entry| entry.unwrap().path())
            .collect();
        inputs.sort();
        assert!(
            !inputs.is_empty(),
            "{target} has no seed in {}",
            folder.display()
        );
        for input in inputs {
            let data = std::fs::read(&input).unwrap();
            let outcome = std::panic::catch_unwind(|| check(&data));
            assert!(
                outcome.is_ok(),
                "{target}: {} breaks a promise",
                input.display()
            );
        }
    }
}
