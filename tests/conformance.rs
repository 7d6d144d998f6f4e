//! The whole conformance corpus (`tests/data/conformance`, or `$WGPU_PAD_CONFORMANCE`), bit
//! for bit, on each path. Without a corpus (the published package) there is nothing to run.

mod common;

use wgpu_pad::gpu::{BufferRange, ExecPath};
use wgpu_pad::{cpu, reference};

#[test]
fn corpus_on_cpu_path() {
    let (total, failures) = common::run_corpus(|case, plan| cpu::pad(plan, &case.input));
    if common::corpus_dir().is_some() {
        common::check_count("corpus cases", total, 395, 1);
    }
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
    corpus_on(gpu);
}

/// The same, on a device whose storage bindings hold only 4 KiB: larger cases run as
/// several binding windows.
#[test]
fn corpus_on_gpu_with_small_bindings() {
    let Some(gpu) = common::gpu_small_bindings() else { return };
    assert_eq!(gpu.device().limits().max_storage_buffer_binding_size, common::SMALL_BINDING);
    corpus_on(gpu);
    // Many cases really split (checked on buffers of their sizes).
    let buffer = |size: u64| {
        gpu.device().create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: size.next_multiple_of(4).max(4),
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        })
    };
    let split = common::cases()
        .iter()
        .filter_map(|case| {
            let plan = case.plan().ok()?;
            let (i, o) = plan.byte_sizes().filter(|_| plan.dtype().gpu_capable())?;
            let pad =
                gpu.kernel().prepare(&plan, BufferRange::whole(&buffer(i)), BufferRange::whole(&buffer(o))).ok()?;
            Some(pad.dispatch_count() > 1)
        })
        .filter(|&split| split)
        .count();
    if common::corpus_dir().is_some() {
        common::check_count("corpus cases split into binding windows", split, 20, 0);
    }
}

// The same for every kernel variant a real GPU is to decide between (on the shared device
// and the small-bindings one): each is bit-exact before it is measured, on every case
// where it runs another program than the default's.
common::variant_shard_tests!(corpus_on_gpu_kernel_variants, corpus_on_variants);

/// The shards are every variant's context, each once: a context left out of them all would
/// pass untested.
#[cfg(feature = "variants")]
#[test]
fn the_variant_shards_hold_every_context_once() {
    let all = common::gpu_variants();
    let mut seen: Vec<*const wgpu_pad::gpu::GpuContext> =
        (0..common::VARIANT_SHARDS).flat_map(common::gpu_variant_shard).map(|(_, ctx)| ctx as *const _).collect();
    seen.sort();
    let mut expected: Vec<_> = all.iter().map(|(_, ctx)| ctx as *const _).collect();
    expected.sort();
    assert_eq!(seen, expected);
}

fn corpus_on_variants(shard: usize) {
    for (variant, gpu) in common::gpu_variant_shard(shard) {
        eprintln!("kernel variant {}", variant.name());
        corpus_on(gpu);
    }
}

fn corpus_on(gpu: &wgpu_pad::gpu::GpuContext) {
    let mut on_gpu = 0;
    let (total, failures) = common::run_corpus_except(
        |plan| common::runs_the_default(gpu, plan),
        |case, plan| {
            let padded = gpu.pad_blocking(plan, &case.input)?;
            // Every GPU-capable type must really run there; the rest falls back visibly.
            assert_eq!(
                padded.path == ExecPath::Gpu,
                case.dtype.gpu_capable(),
                "{}: ran on {:?}",
                case.name,
                padded.path
            );
            on_gpu += usize::from(padded.path == ExecPath::Gpu);
            Ok(padded.tensor)
        },
    );
    assert!(failures.is_empty(), "{} of {total} cases failed:\n{}", failures.len(), failures.join("\n"));
    match common::selected(gpu) {
        common::KernelVariant::Default if total > 0 => common::check_count("corpus cases on the GPU", on_gpu, 251, 0),
        v => eprintln!("{on_gpu} corpus cases on the GPU in another program than the default's ({})", v.name()),
    }
}
