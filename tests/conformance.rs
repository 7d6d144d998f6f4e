//! The whole conformance corpus (`../shared/conformance`), bit for bit, on each path.

mod common;

use wgpu_pad::{cpu, reference};

#[test]
fn corpus_on_cpu_path() {
    let (total, failures) = common::run_corpus(|case, plan| cpu::pad(plan, &case.input));
    assert!(total >= 395, "corpus has only {total} cases");
    assert!(
        failures.is_empty(),
        "{} of {total} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn corpus_on_reference() {
    let (total, failures) = common::run_corpus(|case, plan| Ok(reference::pad(plan, &case.input)));
    assert!(
        failures.is_empty(),
        "{} of {total} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
