//! The whole conformance corpus (`../shared/conformance`), bit for bit, on each path.

mod common;

use wgpu_pad::gpu::ExecPath;
use wgpu_pad::{cpu, reference};

#[test]
fn corpus_on_cpu_path() {
    let (total, failures) = common::run_corpus(|case, plan| cpu::pad(plan, &case.input));
    assert!(total >= 395, "corpus has only {total} cases");
    assert!(failures.is_empty(), "{} of {total} cases failed:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn corpus_on_reference() {
    let (total, failures) = common::run_corpus(|case, plan| Ok(reference::pad(plan, &case.input)));
    assert!(failures.is_empty(), "{} of {total} cases failed:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn corpus_on_gpu_path() {
    let Some(gpu) = common::gpu() else { return };
    let mut on_gpu = 0;
    let (total, failures) = common::run_corpus(|case, plan| {
        let padded = gpu.pad_blocking(plan, &case.input)?;
        // Every GPU-capable type must really run there; the rest falls back visibly.
        assert_eq!(padded.path == ExecPath::Gpu, case.dtype.gpu_capable(), "{}: ran on {:?}", case.name, padded.path);
        on_gpu += usize::from(padded.path == ExecPath::Gpu);
        Ok(padded.tensor)
    });
    assert!(failures.is_empty(), "{} of {total} cases failed:\n{}", failures.len(), failures.join("\n"));
    assert!(on_gpu > 250, "only {on_gpu} cases ran on the GPU");
}
